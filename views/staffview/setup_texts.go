package staffview

import (
	"context"

	"portal/views/lang"
)

// SetupTexts are the texts of the setup page's settings: languages,
// payment and message settings and the membership types' changes. They
// are apart from OpsTexts so that each page's texts are found with
// its page.
type SetupTexts struct {
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
var staffSetupTexts = lang.LoadTexts[SetupTexts]("staff_setup")

// SetupText holds them in English.
var SetupText = staffSetupTexts.For("en")

// SetupTextIn is the setup settings' texts in the language of ctx.
func SetupTextIn(ctx context.Context) *SetupTexts { return staffSetupTexts.In(ctx) }
