package views

import (
	"context"

	"portal/views/lang"
)

// PaymentMethodTexts are the texts of the payment-method choice: on the
// review page, on the pay link of an unpaid order, and the staff setup's
// payment methods section (issue 29).
type PaymentMethodTexts struct {
	Legend, Stripe, StripeHint, BankTransfer, BankTransferHint, DirectDebit, DirectDebitHint, Test, TestHint,
	PayTitle, PayIntro, PayContinue, PayTotal, DebitTitle, DebitIntro, DebitCreditor, DebitCreditorID,
	MandateHeading, MandateHolder, MandateIBAN, MandateBIC, MandateText, MandateConsent, MandateSign, MandateGiven, MandateReference,
	MandateAccount, MandateErrors, MandateReferenceLater string
	// A household's mandate offered again (issue 29).
	MandateDue, MandateHeldIntro, MandateSigned, MandateKeep, MandateKeepHint, MandateChangeHeading, MandateChangeHint,
	MandateChangeConsent, MandateChange, MandateChangeErrors, MandateRevokeHeading, MandateRevokeHint, MandateRevoke string
	// A refused form's consent, said at the box: a new mandate's, an account change's.
	MandateConsentMissing, MandateChangeConsentMissing string
	SetupTitle, SetupIntro, SetupMethods, SetupMethodsHint, SetupDefault, SetupCreditorID, SetupCreditorIDHint,
	SetupPrenotification, SetupPrenotificationHint, SetupFileVersion, SetupSave, SetupSaved string
}

// MethodName is a payment method's name and hint for members.
func (t *PaymentMethodTexts) MethodName(method string) (name, hint string) {
	switch method {
	case "stripe":
		return t.Stripe, t.StripeHint
	case "bank_transfer":
		return t.BankTransfer, t.BankTransferHint
	case "direct_debit":
		return t.DirectDebit, t.DirectDebitHint
	case "test":
		return t.Test, t.TestHint
	}
	return method, ""
}

// paymentMethodTexts are the payment-method texts in every language: the group payment_methods of
// views/lang/locales/member.<code>.json.
var paymentMethodTexts = lang.LoadTexts[PaymentMethodTexts]("payment_methods")

// PaymentMethodTextIn is the payment-method texts in the language of ctx.
func PaymentMethodTextIn(ctx context.Context) *PaymentMethodTexts { return paymentMethodTexts.In(ctx) }
