package registration

import (
	"context"
	"slices"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// formFor renders an instance's current state. persons are the linked persons
// when the caller already has them (nil otherwise).
func (s *Service) formFor(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, persons []engine.Person) (*Form, error) {
	return s.formFrom(ctx, db, inst, persons, nil, nil)
}

// formFrom is formFor with what a read already holds (loadOpenForm): the
// linked persons' statuses in the period, and the instance's selected
// persons and answers (state); each nil is read here.
func (s *Service) formFrom(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, persons []engine.Person, statuses map[int64]string, state *questionState) (*Form, error) {
	def, err := definition.Of(s.Service).Cache().Get(ctx, db, inst.DefinitionID)
	if err != nil {
		return nil, err
	}
	switch {
	case inst.Status == engine.StateDone:
		return s.doneForm(ctx, db, inst, def)
	case engine.Finished(inst.Status):
		return nil, engine.Errorf(engine.CodeConflict, "this registration is already %s", stateWord(inst.Status))
	case inst.CurrentStepID == nil && statuses != nil:
		return selectionFormOf(inst, def, persons, statuses), nil
	case inst.CurrentStepID == nil:
		return s.selectionForm(ctx, db, inst, def, persons)
	}
	if state == nil {
		data, err := store.InstanceData(ctx, db, inst.ID)
		if err != nil {
			return nil, err
		}
		selected, err := store.PersonsByID(ctx, db, inst.SelectedPersons)
		if err != nil {
			return nil, err
		}
		state = &questionState{inst: inst, selected: selected, answers: data}
	}
	return questionForm(inst, def, def.StepNumber(*inst.CurrentStepID), state.selected, answersOf(state.answers)), nil
}

func stateWord(state engine.ProcessState) string {
	switch state {
	case engine.StateCompleted:
		return "completed"
	case engine.StateCancelled:
		return "cancelled"
	case engine.StateFailed:
		return "failed"
	}
	return "finished"
}

func baseForm(inst *engine.ProcessInstance, def *definition.Definition, step int) *Form {
	return &Form{ProcessID: inst.ID, Step: step, TotalSteps: len(def.Steps), State: inst.Status, PeriodID: inst.RelatedEntityID,
		OrganisationID: inst.OrganisationID}
}

// selectionForm is step 0: every linked person with their status.
func (s *Service) selectionForm(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, def *definition.Definition, persons []engine.Person) (*Form, error) {
	if persons == nil {
		var err error
		if persons, err = store.LinkedPersons(ctx, db, inst.UserKey, inst.OrganisationID); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(persons))
	for i, p := range persons {
		ids[i] = p.ID
	}
	statuses, err := store.MembershipStatuses(ctx, db, inst.RelatedEntityID, ids)
	if err != nil {
		return nil, err
	}
	return selectionFormOf(inst, def, persons, statuses), nil
}

// selectionFormOf is the selection form of the linked persons with their
// statuses.
func selectionFormOf(inst *engine.ProcessInstance, def *definition.Definition, persons []engine.Person, statuses map[int64]string) *Form {
	form := baseForm(inst, def, 0)
	for _, p := range persons {
		status := statuses[p.ID]
		form.People = append(form.People, FormPerson{
			ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth,
			Selected:  slices.Contains(inst.SelectedPersons, p.ID) && status == engine.PersonAvailable,
			CanSelect: status == engine.PersonAvailable, Status: status,
		})
	}
	return form
}

// questionForm is a question step with the saved answers of the selected
// persons (answers of steps off the path too: they pre-fill a step that
// comes back onto it). The path is computed from answers, so they must
// hold every answer of the steps before number when the definition has
// conditions.
func questionForm(inst *engine.ProcessInstance, def *definition.Definition, number int, selected []engine.Person, answers map[int64]map[int64]string) *Form {
	step := &def.Steps[number-1]
	form := baseForm(inst, def, number)
	r := def.RouteFor(selected, inst.Period.StartDate, answers)
	form.Position, form.PathLength = r.Position(number), len(r.Steps)
	q := &Question{Name: step.Name, Text: step.QuestionText, Type: step.QuestionType, Required: step.Required}
	for _, o := range step.Options {
		q.Options = append(q.Options, Option{Value: o.Value, Label: o.Label})
	}
	form.Question = q
	for _, p := range selected {
		fp := FormPerson{
			ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth,
			Hide: r.Hides(number, p.ID), Selected: true, CanSelect: true,
			Status: engine.PersonAvailable,
		}
		// A step left without an answer stores "" (the review tells it
		// from one never reached); the form has no answer for it, null
		// on the wire, as the spec's "send null for absent values".
		if v, ok := answers[step.ID][p.ID]; ok && v != "" {
			fp.Answer = &v
		}
		form.People = append(form.People, fp)
	}
	return form
}

// doneForm is the committed state: persons pending payment and the payment link.
func (s *Service) doneForm(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, def *definition.Definition) (*Form, error) {
	selected, err := store.PersonsByID(ctx, db, inst.SelectedPersons)
	if err != nil {
		return nil, err
	}
	url, err := payment.Of(s.Service).PayLinkFor(ctx, db, inst.ID)
	if err != nil {
		return nil, err
	}
	form := baseForm(inst, def, len(def.Steps)+1)
	form.PaymentURL = url
	for _, p := range selected {
		form.People = append(form.People, FormPerson{
			ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth,
			Selected: true, Status: engine.PersonPendingPayment, PaymentURL: url,
		})
	}
	return form, nil
}
