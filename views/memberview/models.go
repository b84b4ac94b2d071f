package memberview

import (
	"portal/views"
)

// TestGatewayModel is the test gateway's payment page.
type TestGatewayModel struct {
	views.Chrome
	Reference string
	Action    string
	Lines     []views.OrderLineModel
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
	views.Chrome
	Outcome        PaymentOutcome
	Message        string
	Reference      string
	Lines          []views.OrderLineModel
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
	views.Chrome
	Period    string
	Persons   []PersonStatusModel
	State     OverviewState
	StartURL  string
	ResumeURL string // POST target that resumes and goes to the current step
	ResetURL  string // confirmation page of "start again"
	PayURL    string
	Lines     []views.OrderLineModel
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
	views.Chrome
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
	views.Chrome
	Period        string
	Persons       []ReviewPersonModel
	ChangeAction  string
	ConfirmAction string
	Version       string // the reviewed version, sent back with Confirm
	Lines         []views.OrderLineModel
	Total         string
	PriceProblem  string
	Notice        string
	CanConfirm    bool
	// Methods are the payment methods to choose from (issue 29).
	Methods PaymentMethodChoiceModel
}

// DoneModel is the page after the commit: order summary and the payment link.
type DoneModel struct {
	views.Chrome
	Period     string
	Persons    []PersonStatusModel
	Lines      []views.OrderLineModel
	Total      string
	PaymentURL string
	Seconds    int
	// BankTransfer, when the registration is paid by bank transfer, is
	// shown instead of the countdown to a payment page.
	BankTransfer *views.BankTransferModel
}

// PayByTransferModel is the pay link's page for a bank transfer.
type PayByTransferModel struct {
	views.Chrome
	Transfer views.BankTransferModel
}

// ResetModel confirms "start again".
type ResetModel struct {
	views.Chrome
	Action    string
	CancelURL string
	Committed bool
}
