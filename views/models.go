// Package views holds the templ components and their view models. Views get
// everything ready to print: no database, no services.
package views

import "context"

// Chrome is what every page frame needs: its title and the asset addresses.
type Chrome struct {
	Title  string // without the "Error: " prefix; Error adds it
	Error  bool   // the page shows a validation error: the title starts with "Error:"
	Assets Assets
}

// Assets are the content-hashed addresses of the static files.
type Assets struct {
	CSS  string
	HTMX string
	App  string
}

// FullTitle is the document title.
func (c Chrome) FullTitle(ctx context.Context) string {
	if c.Error {
		return tr(ctx, "title_error", map[string]any{"Title": c.Title})
	}
	return tr(ctx, "title", map[string]any{"Title": c.Title})
}

// ErrorModel is an error page.
type ErrorModel struct {
	Chrome
	Message  string
	Link     string // optional way on
	LinkText string
}

// OrderLineModel is one printed order line.
type OrderLineModel struct {
	Description string
	Amount      string
}

// TestGatewayModel is the test gateway's payment page.
type TestGatewayModel struct {
	Chrome
	Reference string
	Action    string
	Lines     []OrderLineModel
	Total     string
	Open      bool
	Status    string
}

// PaymentOutcome is how a payment attempt ended, as the return page tells it.
// Its value is the page's data-outcome.
type PaymentOutcome string

// Outcomes of the payment return page.
const (
	OutcomeSuccess   PaymentOutcome = "success"
	OutcomeFailed    PaymentOutcome = "failed"
	OutcomeCancelled PaymentOutcome = "cancelled"
	OutcomeStale     PaymentOutcome = "stale" // the registration changed after the payment started
	// OutcomePending: the portal is still confirming the payment with the
	// provider; the page checks again by itself (htmx) or on a click.
	OutcomePending PaymentOutcome = "pending"
	// OutcomeMismatch: the provider reported another amount; staff check it.
	OutcomeMismatch PaymentOutcome = "mismatch"
)

// PaymentReturnModel is the page after a payment.
type PaymentReturnModel struct {
	Chrome
	Outcome        PaymentOutcome
	Message        string
	Reference      string
	Lines          []OrderLineModel
	Total          string
	RetryReference string // set when a new attempt may be started
	RetryURL       string // where the retry form posts: /membership/payment-retry, under /o/{slug} when the page is
	RegisterURL    string // back to the registration
	DetailsHidden  bool   // the viewer is not the order's owner: no names, lines or amounts
	// PollURL, set while the payment is being confirmed, is the address
	// the page is checked again at.
	PollURL string
}

// PersonStatusModel is a person with a status badge on the overview.
type PersonStatusModel struct {
	Name   string
	Born   string
	Status string
	Badge  string // badge-available, badge-registered or badge-pending
}

// OverviewState is where a registration stands, as the overview offers the
// way on. Its value is the overview's data-state.
type OverviewState string

// States of the overview.
const (
	OverviewNew         OverviewState = "new"           // nothing started: Start
	OverviewInProgress  OverviewState = "in-progress"   // started: Continue or Start again
	OverviewCommitted   OverviewState = "committed"     // saved, waiting for payment: Pay now
	OverviewNothingToDo OverviewState = "nothing-to-do" // nobody left to register
)

// OverviewModel is the registration's start page.
type OverviewModel struct {
	Chrome
	Period    string
	Persons   []PersonStatusModel
	State     OverviewState
	StartURL  string
	ResumeURL string // POST target that resumes and goes to the current step
	ResetURL  string // confirmation page of "start again"
	PayURL    string
	Lines     []OrderLineModel
	Total     string
	// DataURL is the household's "Your data" page.
	DataURL string
}

// FieldModel is one input of a step, usually one person's answer.
type FieldModel struct {
	ID       string // the input's id and name, e.g. answer-3
	Label    string // the person's name
	Value    string
	Values   []string // SEL: the chosen options
	Checked  bool
	Disabled bool
	Hint     string
	Error    string
}

// ChoiceModel is an option of a DRP, RDO or SEL question.
type ChoiceModel struct {
	Value string
	Label string
}

// ErrorLink is one entry of the error summary.
type ErrorLink struct {
	Href    string
	Message string
}

// QuestionKind is what a step page asks for: the choice of persons, or one
// kind of question. Its value is the page's data-type.
type QuestionKind string

// Kinds of step page.
const (
	KindSelectPersons QuestionKind = "SELECT" // person selection
	KindText          QuestionKind = "TXT"
	KindNumber        QuestionKind = "NUM"
	KindDropdown      QuestionKind = "DRP"
	KindCheckbox      QuestionKind = "BCB" // yes or no
	KindAccept        QuestionKind = "ITC" // accept the terms
	KindOne           QuestionKind = "ONE" // one person of the selection
	KindRadio         QuestionKind = "RDO"
	KindMulti         QuestionKind = "SEL" // several options
)

// StepModel is a question page, or person selection (KindSelectPersons).
type StepModel struct {
	Chrome
	Action     string // POST target
	BackAction string // POST target of Back; empty on the first page
	BackStep   int
	Number     int // 0 for person selection
	Total      int
	Progress   string
	Heading    string // the question: the page's heading and the legend
	Type       QuestionKind
	Required   bool
	Fields     []FieldModel
	Choices    []ChoiceModel
	OneChoice  string // ONE: id of the chosen person
	Errors     []ErrorLink
	Notice     string // e.g. a stale submission
	SubmitText string
}

// ReviewRow is one answered question of a person.
type ReviewRow struct {
	Question   string
	Answer     string
	ChangeStep int
}

// ReviewPersonModel is one person's answers.
type ReviewPersonModel struct {
	Name string
	Rows []ReviewRow
}

// ReviewModel is the check-your-answers page.
type ReviewModel struct {
	Chrome
	Period        string
	Persons       []ReviewPersonModel
	ChangeAction  string
	ConfirmAction string
	Version       string // the reviewed version, sent back with Confirm
	Lines         []OrderLineModel
	Total         string
	PriceProblem  string
	Notice        string
	CanConfirm    bool
}

// DoneModel is the page after the commit: order summary and the payment link.
type DoneModel struct {
	Chrome
	Period     string
	Persons    []PersonStatusModel
	Lines      []OrderLineModel
	Total      string
	PaymentURL string
	Seconds    int
	// BankTransfer, when the registration is paid by bank transfer, is
	// shown instead of the countdown to a payment page.
	BankTransfer *BankTransferModel
}

// PayByTransferModel is the pay link's page for a bank transfer.
type PayByTransferModel struct {
	Chrome
	Transfer BankTransferModel
}

// ResetModel confirms "start again".
type ResetModel struct {
	Chrome
	Action    string
	CancelURL string
	Committed bool
}

// ContinueModel carries a browser across a cross-site arrival, after which
// SameSite=Strict cookies are sent again.
type ContinueModel struct {
	Chrome
	URL string
}

// BankTransferModel is what a member needs to pay by bank transfer: the
// fields to type into a banking app, each also in the form to copy, and
// the QR code that fills them in. The handler or mail builder maps
// engine/banking's types to these strings.
type BankTransferModel struct {
	Creditor string
	// CreditorAddress is the account holder's postal address in one line;
	// empty: the row is left out.
	CreditorAddress string
	// IBAN is printed in groups of four; IBANCompact, without spaces, is
	// what the copy button copies (some banking apps refuse spaces).
	IBAN, IBANCompact string
	// BIC is optional; empty: the row is left out.
	BIC string
	// Amount is "184.50" (what the amount field of a banking app takes),
	// Currency "EUR" or "CHF".
	Amount, Currency string
	// Reference is the RF creditor reference in groups of four;
	// ReferenceCompact is its electronic form.
	Reference, ReferenceCompact string
	// QRSVG is the code as an inline SVG element from engine/banking,
	// which names it (role img, aria-label) and escapes all text in it.
	QRSVG string
	// QRImageURL, when set, shows the code as an image instead (e-mails:
	// a cid: or data: URL of its PNG), with QRName as its alternative text.
	QRImageURL string
	QRName     string
	// Interactive adds the copy buttons (pages, not e-mails).
	Interactive bool
	// PartlyPaid says part of the order's total arrived already: Amount
	// is what is still open.
	PartlyPaid bool
}

// BankTransferField is one printed field of a bank transfer.
type BankTransferField struct {
	// Key names the field in ids and data-testid: creditor, iban, bic,
	// amount, reference.
	Key, Label string
	// Shown is printed; Copy is what the copy button puts on the clipboard.
	Shown, Copy string
}

// Fields lists the fields in the order banking apps ask for them.
func (m BankTransferModel) Fields(ctx context.Context) []BankTransferField {
	fs := []BankTransferField{
		{Key: "creditor", Label: tr(ctx, "bank_transfer_creditor"), Shown: m.Creditor, Copy: m.Creditor},
	}
	if m.CreditorAddress != "" {
		fs = append(fs, BankTransferField{Key: "address", Label: tr(ctx, "bank_transfer_address"), Shown: m.CreditorAddress, Copy: m.CreditorAddress})
	}
	fs = append(fs, BankTransferField{Key: "iban", Label: tr(ctx, "bank_transfer_iban"), Shown: m.IBAN, Copy: m.IBANCompact})
	if m.BIC != "" {
		fs = append(fs, BankTransferField{Key: "bic", Label: tr(ctx, "bank_transfer_bic"), Shown: m.BIC, Copy: m.BIC})
	}
	return append(fs,
		BankTransferField{Key: "amount", Label: tr(ctx, "bank_transfer_amount"), Shown: m.Currency + " " + m.Amount, Copy: m.Amount},
		BankTransferField{Key: "reference", Label: tr(ctx, "bank_transfer_reference"), Shown: m.Reference, Copy: m.ReferenceCompact},
	)
}
