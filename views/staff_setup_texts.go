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

// staffSetupTexts are the setup settings' texts in every language: the group staff_setup of
// views/lang/locales/staff.<code>.json.
var staffSetupTexts = lang.LoadTexts[StaffSetupTexts]("staff_setup")

// StaffSetupText holds them in English.
var StaffSetupText = staffSetupTexts.For("en")

// StaffSetupTextIn is the setup settings' texts in the language of ctx.
func StaffSetupTextIn(ctx context.Context) *StaffSetupTexts { return staffSetupTexts.In(ctx) }
