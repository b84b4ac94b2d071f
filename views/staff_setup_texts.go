package views

import (
	"context"

	"portal/views/lang"
)

// StaffSetupTexts are the texts of the setup page's settings: languages,
// payment and message settings and the membership types' changes. They
// are apart from StaffOpsTexts so that each page's texts are found with
// its page.
type StaffSetupTexts struct {
	// Sections
	SetupLanguages, SetupPayments, SetupMessages string
	// Languages
	LangIntro, LangEnabled, LangDefault, LangSaved string
	// Payment settings
	PayIntro, PayProvider, PayProviderDefault, PayProviderStripe, PayProviderBank, PayProviderTest, PayStripeTitle,
	PayStripeKey, PayStripeKeyNew, PayWebhookSecret, PayWebhookSecretNew, PayClearSecret, PaySecretNotSet, PayBankTitle, PayCreditor,
	PayAddress, PayIBAN, PayBIC, PayQRKind, PayQREPC, PayQRSwiss, PayQRNone, PaySaved string
	// Message settings
	MsgIntro, MsgUnpaidDays, MsgExpiryDays, MsgResumeHours, MsgRenewalDays, MsgSenderName, MsgReplyTo, MsgSaved,
	NotANumber, NotNumbers string
	// Membership types
	TypeActions, TypeAdd, TypeEdit, TypeEditLink, TypeCancelEdit, TypeMinAge, TypeMaxAge, TypeDelete, TypeDeleteQuestion,
	TypeDeleteDetail, TypeAdded, TypeChanged, TypeDeleted string
	// TypeNameDefault labels the name in the default language (%s: its
	// name); TypeNameIn a name in another language, TypeNameInHint says
	// that they are all or none.
	TypeNameDefault, TypeNameIn, TypeNameInHint string
}

// StaffSetupText are the setup settings' texts in English.
var StaffSetupText = StaffSetupTexts{
	SetupLanguages: "Languages",
	SetupPayments:  "Payment settings",
	SetupMessages:  "Reminders and e-mail",

	LangIntro:   "The languages members can choose. Every process definition needs its texts in each of them.",
	LangEnabled: "Languages offered to members",
	LangDefault: "Default language (one of the languages offered)",
	LangSaved:   "The languages were saved.",

	PayIntro:            "How members of this organisation pay. Secrets are never shown again: type a new one to replace it.",
	PayProvider:         "Payment provider",
	PayProviderDefault:  "The portal's default provider",
	PayProviderStripe:   "Stripe (card and other online payments)",
	PayProviderBank:     "Bank transfer with a QR code",
	PayProviderTest:     "Test gateway (development portal only)",
	PayStripeTitle:      "Stripe account",
	PayStripeKey:        "Stripe secret key",
	PayStripeKeyNew:     "New Stripe secret key (sk_… or rk_…; leave empty to keep the current one)",
	PayWebhookSecret:    "Stripe webhook signing secret",
	PayWebhookSecretNew: "New webhook signing secret (whsec_…; leave empty to keep the current one)",
	PayClearSecret:      "Remove this secret",
	PaySecretNotSet:     "Not set.",
	PayBankTitle:        "Bank account",
	PayCreditor:         "Account holder",
	PayAddress:          "Account holder's address as street;number;postcode;town;country (a Swiss account needs it)",
	PayIBAN:             "IBAN",
	PayBIC:              "BIC (optional)",
	PayQRKind:           "QR code on the payment page",
	PayQREPC:            "EPC code (SEPA, EUR) for banking apps, chosen by the account's country",
	PayQRSwiss:          "Swiss QR-bill, chosen by the account's country",
	PayQRNone:           "none until a bank account is set",
	PaySaved:            "The payment settings were saved.",

	MsgIntro:       "When reminders go out and how the organisation's e-mail is signed. Empty or 0 returns a setting to the portal's default.",
	MsgUnpaidDays:  "Reminders of unpaid registrations: days after the registration, such as 3, 10",
	MsgExpiryDays:  "Expiry reminder: days before a membership ends",
	MsgResumeHours: "Resume link: hours of inactivity before a registration is suspended",
	MsgRenewalDays: "Renewal prompts: days before the period ends",
	MsgSenderName:  "Sender name (empty: the organisation's name)",
	MsgReplyTo:     "Reply-to address (empty: the contact address)",
	MsgSaved:       "The reminder and e-mail settings were saved.",
	NotANumber:     "must be a whole number",
	NotNumbers:     "must be whole numbers separated by commas",

	TypeActions:        "Actions",
	TypeAdd:            "Add a membership type",
	TypeEdit:           "Change the membership type",
	TypeEditLink:       "Change",
	TypeCancelEdit:     "Cancel",
	TypeMinAge:         "Youngest age (empty: no limit)",
	TypeNameDefault:    "Name (%s, the default language)",
	TypeNameIn:         "Name in %s",
	TypeNameInHint:     "Leave every other language empty to show the name above in all of them, or give the name in each.",
	TypeMaxAge:         "Oldest age (empty: no limit)",
	TypeDelete:         "Delete",
	TypeDeleteQuestion: "Delete this membership type?",
	TypeDeleteDetail:   "A type that a membership or a price rule uses is kept: rename it instead. Deleting cannot be undone.",
	TypeAdded:          "The membership type was added.",
	TypeChanged:        "The membership type was changed.",
	TypeDeleted:        "The membership type was deleted.",
}

var staffSetupTexts = map[string]*StaffSetupTexts{"en": &StaffSetupText,
	"de": withEnglish(staffSetupTextDE, StaffSetupText), "fr": withEnglish(staffSetupTextFR, StaffSetupText)}

// StaffSetupTextIn is the setup settings' texts in the language of ctx.
func StaffSetupTextIn(ctx context.Context) *StaffSetupTexts {
	if t, ok := staffSetupTexts[lang.Of(ctx).Code]; ok {
		return t
	}
	return &StaffSetupText
}
