package registration

import (
	"context"
	"slices"
	"strings"

	"portal/engine"
	"portal/engine/internal/store"
)

// Review is everything a member answered, grouped by person, with the price
// the commit would charge: the check-your-answers page.
type Review struct {
	ProcessID      int64
	PeriodID       int64
	OrganisationID int64
	Period         string // the period's name
	Step           int    // the current step
	Version        int64  // the instance's version: Confirm commits only this state
	Complete       bool   // every question is answered and the registration can be confirmed
	Persons        []ReviewPerson
	Quote          Quote
	// QuoteError explains why no price could be made (for example a person
	// who is not eligible); empty when Quote is valid.
	QuoteError string
}

// ReviewPerson is one selected person and their answers.
type ReviewPerson struct {
	ID        int64
	FirstName string
	LastName  string
	Answers   []ReviewAnswer
}

// ReviewAnswer is one question as this person answered it.
type ReviewAnswer struct {
	Step     int
	Question string
	Type     engine.QuestionType
	Answer   string // for people: option labels, "Yes"/"No" for 0/1 questions
	Given    bool
}

// Review returns the answers of a running registration for review.
func (s *Service) Review(ctx context.Context, userKey, processID string) (_ *Review, err error) {
	inst, def, err := s.loadOpen(ctx, s.DB(), userKey, processID)
	if err != nil {
		return nil, err
	}
	if err := TouchActivity(ctx, s.DB(), inst, s.Clock()); err != nil { // reading counts as activity (lifecycle.go)
		return nil, err
	}
	selected, err := store.PersonsByID(ctx, s.DB(), inst.SelectedPersons)
	if err != nil {
		return nil, err
	}
	data, err := store.InstanceData(ctx, s.DB(), inst.ID)
	if err != nil {
		return nil, err
	}
	answers := answersOf(data)
	current := 0
	if inst.CurrentStepID != nil {
		current = def.StepNumber(*inst.CurrentStepID)
	}
	path := def.RouteFor(selected, inst.Period.StartDate, answers)
	r := &Review{ProcessID: inst.ID, PeriodID: inst.RelatedEntityID, OrganisationID: inst.OrganisationID, Period: inst.Period.Name, Step: current, Version: inst.Version,
		Complete: current == len(def.Steps) && len(selected) > 0}
	for _, p := range selected {
		rp := ReviewPerson{ID: p.ID, FirstName: p.FirstName, LastName: p.LastName}
		for i := range def.Steps {
			step := &def.Steps[i]
			// Only the current path: answers off it stay stored but are
			// not part of what would be committed.
			if !path.Includes(i+1) || path.Hides(i+1, p.ID) {
				continue
			}
			v, given := answers[step.ID][p.ID]
			if !given && i+1 == len(def.Steps) {
				r.Complete = false
			}
			rp.Answers = append(rp.Answers, ReviewAnswer{Step: i + 1, Question: step.QuestionText, Type: step.QuestionType,
				Answer: DisplayAnswer(step, v), Given: given})
		}
		r.Persons = append(r.Persons, rp)
	}
	if q, _, err := s.quoteFor(ctx, s.DB(), inst, def, selected, answers, s.Clock()); err != nil {
		if e, ok := engine.AsError(err); ok && e.Code != engine.CodeInternal && e.Code != engine.CodeUnavailable {
			r.QuoteError = e.Message
		} else {
			return nil, err
		}
	} else {
		r.Quote = q
	}
	return r, nil
}

// DisplayAnswer is a stored answer as the member's pages show it: a
// choice by its options' labels (those of step, in the language step was
// put in by InLanguage), a yes/no question as "Yes" or "No", which
// callers word in their page's language.
func DisplayAnswer(step *engine.ProcessStep, v string) string {
	switch step.QuestionType {
	case engine.TypeCheckbox, engine.TypeAccept, engine.TypeOne:
		if v == "1" {
			return "Yes"
		}
		return "No"
	case engine.TypeDropdown, engine.TypeRadio, engine.TypeMulti:
		var labels []string
		for _, part := range strings.Split(v, ",") {
			i := slices.IndexFunc(step.Options, func(o engine.ProcessStepOption) bool { return o.Value == part })
			if i >= 0 {
				labels = append(labels, step.Options[i].Label)
			}
		}
		return strings.Join(labels, ", ")
	}
	return v
}

// Confirm commits a registration whose last answers were held for review
// (NextInput.HoldCommit): the same commit as answering the last question.
// reviewed is the Review's Version: if anything changed since (another
// window answered again), the commit is refused with a conflict. method is
// the payment method the member chose ("" for the club's default).
func (s *Service) Confirm(ctx context.Context, userKey, processID string, reviewed int64, method string) (_ *Form, err error) {
	inst, def, err := s.loadOpen(ctx, s.DB(), userKey, processID)
	if err != nil {
		return nil, err
	}
	if inst.CurrentStepID == nil || def.StepNumber(*inst.CurrentStepID) != len(def.Steps) {
		return nil, engine.Errorf(engine.CodeConflict, "this registration changed in another window: answer the remaining questions first")
	}
	last := def.Steps[len(def.Steps)-1]
	rows, err := store.StepAnswers(ctx, s.DB(), inst.ID, last.ID)
	if err != nil {
		return nil, err
	}
	if reviewed != inst.Version {
		return nil, engine.Errorf(engine.CodeConflict, "this registration changed in another window after you checked it; check it again")
	}
	in := NextInput{ProcessID: processID, Step: len(def.Steps), ExpectVersion: reviewed, PaymentMethod: method}
	for _, r := range rows {
		if r.PersonID != nil {
			v := r.DataValue
			in.People = append(in.People, PersonInput{ID: *r.PersonID, Answer: &v})
		}
	}
	// Next re-checks the step and the version inside its transaction, so a
	// change made meanwhile in another window still ends in a conflict.
	return s.Next(ctx, userKey, in)
}
