package registration

import (
	"strconv"
	"time"

	"portal/engine"
)

// Form is the state of a registration as the member sees it; the HTTP layer
// turns it into the spec's FormDTO or into a page.
type Form struct {
	ProcessID  int64
	Step       int // 0 is person selection, 1..TotalSteps the questions, TotalSteps+1 done
	TotalSteps int // the definition's steps; Step == TotalSteps is the last question of every path
	// Position and PathLength place a question on the current path (the
	// steps left out by conditions not counted): "Question Position of
	// PathLength". Both are 0 outside question steps.
	Position       int
	PathLength     int
	State          engine.ProcessState
	PeriodID       int64
	OrganisationID int64
	Question       *Question // nil outside question steps
	People         []FormPerson
	PaymentURL     string // set when DONE and a payment link exists
}

// Question is the current step's question.
type Question struct {
	Name     string
	Text     string
	Type     engine.QuestionType
	Required bool
	Options  []Option
}

// Option is one choice of a question.
type Option struct {
	Value string
	Label string
}

// FormPerson is one person on a form.
type FormPerson struct {
	ID          int64
	FirstName   string
	LastName    string
	DateOfBirth time.Time
	Answer      *string
	Hide        bool
	Selected    bool
	CanSelect   bool
	Status      string
	PaymentURL  string
}

// PersonInput is one person of a submitted step: selection or answer.
type PersonInput struct {
	ID       int64
	Selected *bool   // selection step: nil means selected (the spec lets clients send only ids)
	Answer   *string // question steps: nil when absent
}

// NextInput is a submitted step.
type NextInput struct {
	ProcessID string
	Step      int
	People    []PersonInput
	// HoldCommit stores the answers of the last question without committing,
	// so that a check-your-answers page can come first; Confirm commits.
	HoldCommit bool
	// ExpectVersion, when set, must be the instance's version: Confirm uses
	// it so that what commits is exactly what the member reviewed.
	ExpectVersion int64
	// PaymentMethod is the payment method the member chose for the
	// commit: one of the club's (PaymentMethods); "" for its default.
	PaymentMethod string
}

// ProcessIDString is the process id as the API carries it.
func (f *Form) ProcessIDString() string { return strconv.FormatInt(f.ProcessID, 10) }
