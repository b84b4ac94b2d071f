package memberview

import (
	"portal/views"
)

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
	views.Chrome
	Action  string
	Total   string
	Methods PaymentMethodChoiceModel
}

// PayByDebitModel is the pay link of an order paid by direct debit: what
// will be collected and by whom.
type PayByDebitModel struct {
	views.Chrome
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
