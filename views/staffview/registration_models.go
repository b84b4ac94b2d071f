package staffview

import (
	"portal/views"
)

// DetailModel is one registration, read as a record: each part is a
// section of its own (Detail), so that a feature adds its
// section with one line there.
type DetailModel struct {
	Chrome
	ID, UserKey, State, StateKey, Period, Started, Updated, Definition string
	// Household are the persons of this registration only, each with
	// the memberships it asked for.
	Household []PersonRow
	// Steps are the questions with the answers as the member saw them;
	// none when the answers were archived (Archive says so).
	Steps []StepRow
	// Archive says in words what the archive did, "" when not archived.
	Archive string
	Order   *OrderModel
	Mandate *MandateModel // the SEPA direct-debit mandate of the order, nil without one
	// Consents are the consents given in this registration (staff_privacy.templ).
	Consents []ConsentRow
	// History is what happened to the payment and every message, oldest
	// first.
	History []HistoryEntry
	Audit   []AuditRow
	Actions DetailActions
	// Today is the capture form's default booking date (YYYY-MM-DD).
	Today string
}

// PersonRow is one person of the registration.
type PersonRow struct {
	Name, Born, Email string
	Memberships       []PersonMembership
	// DataURL is the person's data page; "" for roles that may not see it.
	DataURL string
}

// PersonMembership is a membership a person's registration asked for.
type PersonMembership struct {
	// Type is the membership type and kind ("Adult (new member)"),
	// Status its state in words, StatusKey the stored state for its colour.
	Type, Status, StatusKey string
}

// StepRow is one question and its answers.
type StepRow struct {
	Question string
	Answers  []string // "Name: answer", or the answer alone
}

// OrderModel is the registration's order.
type OrderModel struct {
	Reference, Status, Total, Created, Paid string
	// TransferReference is the RF creditor reference members write on
	// their bank transfer ("" when the order is not paid by transfer).
	TransferReference string
	Lines             []views.OrderLineModel
}

// HistoryEntry is one thing that happened to the registration's
// payment or one message about it.
type HistoryEntry struct {
	// Kind is "attempt", "payment", "refund" or "message": its marker.
	Kind string
	At   string
	// Title says what happened; Detail adds who, when booked, the
	// reference or the recipient; Status is an attempt's state or a
	// message's delivery.
	Title, Detail, Status string
	// Problem is an attempt's mismatch or a message's delivery error.
	Problem string
	// RefundURL is where a refund of the attempt RefundRef posts; "" when
	// it cannot be refunded or the role may not.
	RefundURL, RefundRef string
}

// DetailActions are the actions the role may take now; "" hides one.
type DetailActions struct {
	ResendConfirmation, ResendPaymentLink, Capture, Cancel, Reset string
	CaptureCurrency                                               string
	// CaptureAmount pre-fills the capture form with what is still owed
	// (a plain amount, "184.50"); CaptureOwed says what arrived and what
	// is owed when part arrived already.
	CaptureAmount, CaptureOwed string
}
