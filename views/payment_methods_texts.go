package views

import (
	"context"
	"strings"

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

// PaymentMethodChoiceModel is the radio group of the payment methods:
// shown only when there is something to choose.
type PaymentMethodChoiceModel struct {
	Methods []string // the club's, its default first
	Current string   // the method checked
}

// Shown says whether the member has a choice.
func (m PaymentMethodChoiceModel) Shown() bool { return len(m.Methods) > 1 }

// PayChooseModel is the pay link of an unpaid order whose club offers
// several methods: the choice again, then on to the chosen method.
type PayChooseModel struct {
	Chrome
	Action  string
	Total   string
	Methods PaymentMethodChoiceModel
}

// StaffPaymentMethodsForm is the setup page's payment methods form, as
// stored or as typed after a refused change.
type StaffPaymentMethodsForm struct {
	Action              string
	Options             []StaffPaymentMethodOption
	Default             string
	CreditorID          string
	PrenotificationDays int
	FileVersion         string
	// CollectionDay ("" for none) and ReturnFee (an amount, "" for none)
	// are as stored or as typed.
	CollectionDay, ReturnFee string
	Errors                   map[string]string
}

// StaffPaymentMethodOption is one method the club may offer.
type StaffPaymentMethodOption struct {
	Value, Label string
	Checked      bool
}

// PayByDebitModel is the pay link of an order paid by direct debit: what
// will be collected and by whom.
type PayByDebitModel struct {
	Chrome
	Total, Creditor, CreditorID string
	// Action is where the mandate form posts; "" once a mandate is given.
	Action string
	// Text is the mandate text (with its reference once given).
	Text string
	// Given: the mandate's reference and masked account.
	Reference, Account string
	// Due is the collection date once the order is collected under it.
	Due string
	// Holder, IBAN, BIC are as typed after a refusal; Errors by field.
	Holder, IBAN, BIC string
	Errors            map[string]string
	// Held is the household's mandate offered for this order (keep it,
	// change its account, revoke it); nil when there is none to offer.
	// The account change takes Holder, IBAN, BIC and Errors.
	Held *HeldMandateModel
}

// HeldMandateModel is a household's mandate offered again on the pay
// link of its next direct-debit order.
type HeldMandateModel struct {
	ID                                     string // the mandate's id, posted back with each choice
	Holder, Account, Reference, Signed     string
	Text                                   string // as signed
	KeepAction, ChangeAction, RevokeAction string
}

// StaffMandateModel is a registration's SEPA mandate as staff see it.
type StaffMandateModel struct {
	Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text string
	// Ended says when and why the mandate ended; "" while it holds.
	Ended string
	// RevokeAction is where staff revoke it (treasurers and
	// administrators, while it holds); "" otherwise. Registration is the
	// registration's id the form posts, to come back to its page.
	RevokeAction, Registration string
}

// StaffMandateTexts label a mandate on the staff registration page.
type StaffMandateTexts struct {
	Heading, Reference, CreditorID, Holder, IBAN, BIC, Language, Signed, Version, Text    string
	Ended, Revoke, RevokeHint, RevokeQuestion, RevokeDetail, RevokeYes, RevokeNo, Revoked string
	// EndReasons name engine.MandateEnd... (a return's reason code follows "return:").
	EndReasons map[string]string
}

// EndReason names why a mandate ended (engine.MandateEnd...), with a
// returned debit's reason code.
func (t *StaffMandateTexts) EndReason(reason string) string {
	if code, ok := strings.CutPrefix(reason, "return:"); ok {
		return t.EndReasons["return:"] + " (" + code + ")"
	}
	if w, ok := t.EndReasons[reason]; ok {
		return w
	}
	return reason
}

// paymentMethodTexts are the payment-method texts in every language: the group payment_methods of
// views/lang/locales/member.<code>.json.
var paymentMethodTexts = lang.LoadTexts[PaymentMethodTexts]("payment_methods")

// PaymentMethodTextIn is the payment-method texts in the language of ctx.
func PaymentMethodTextIn(ctx context.Context) *PaymentMethodTexts { return paymentMethodTexts.In(ctx) }

// staffMandateTexts are the mandate labels in every language: the group staff_mandate of
// views/lang/locales/staff.<code>.json.
var staffMandateTexts = lang.LoadTexts[StaffMandateTexts]("staff_mandate")

// StaffMandateTextIn is the mandate labels in the language of ctx.
func StaffMandateTextIn(ctx context.Context) *StaffMandateTexts { return staffMandateTexts.In(ctx) }
