package registration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// Next stores the answers of the current step and moves on: to the first
// question after person selection, to the following question, or, after the
// last one, commits the registration (state DONE).
func (s *Service) Next(ctx context.Context, userKey string, in NextInput) (_ *Form, err error) {
	// The common steps in prepared statements, without a transaction on
	// PostgreSQL; what they leave (done false) takes the transaction below.
	next := s.nextQuestion
	if in.Step == 0 {
		next = s.nextSelection
	}
	if form, done, err := next(ctx, userKey, in); done || err != nil {
		return form, err
	}
	var form *Form
	var committed *engine.Order
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		inst, def, err := s.loadOpen(ctx, tx, userKey, in.ProcessID)
		if err != nil {
			return err
		}
		now := s.Clock() // one time for the whole transaction: the checks, the price and the records
		current, err := checkNext(inst, def, in, now)
		if err != nil {
			return err
		}
		if current == 0 {
			form, err = s.submitSelection(ctx, tx, inst, def, in, now)
			return err
		}
		selected, data, err := readPlanInputs(ctx, tx, inst)
		if err != nil {
			return err
		}
		plan, err := planAnswers(inst, def, current, in, selected, data)
		if err != nil {
			return err
		}
		form, committed, err = s.submitAnswers(ctx, tx, inst, def, plan, in, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if committed != nil {
		// After the commit, outside its transaction: the provider is never
		// called inside one. Without a link the registration stands.
		url := payment.Of(s.Service).StartPayment(ctx, committed)
		form.PaymentURL = url
		for i := range form.People {
			form.People[i].PaymentURL = url
		}
	}
	return form, nil
}

// checkNext checks that answers for in.Step may be given now and returns
// the registration's current step number (0: person selection).
func checkNext(inst *engine.ProcessInstance, def *definition.Definition, in NextInput, now time.Time) (int, error) {
	if err := checkAcceptsAnswers(inst, now); err != nil {
		return 0, err
	}
	current := 0
	if inst.CurrentStepID != nil {
		current = def.StepNumber(*inst.CurrentStepID)
	}
	if in.ExpectVersion != 0 && in.ExpectVersion != inst.Version {
		return 0, engine.Errorf(engine.CodeConflict, "this registration changed in another window after you checked it; check it again")
	}
	if in.Step != current {
		return 0, &engine.Error{Code: engine.CodeConflict, ProcessID: in.ProcessID, Step: current,
			Message: fmt.Sprintf("this registration changed in another window: it is at step %d, the answers were for step %d", current, in.Step)}
	}
	return current, nil
}

// checkAcceptsAnswers rejects answers once the period has closed or the
// definition was deactivated, even for a registration already under way.
func checkAcceptsAnswers(inst *engine.ProcessInstance, now time.Time) error {
	if !inst.Period.AcceptsRegistrations(now) {
		return engine.Errorf(engine.CodeConflict, "registration for %s is closed", inst.Period.Name)
	}
	if inst.Definition != nil && !inst.Definition.Active {
		return engine.Errorf(engine.CodeConflict, "registration is not available: the registration form was deactivated; please contact the organisation")
	}
	return nil
}

// checkOpen rejects answers to an instance that is committed or finished.
func checkOpen(inst *engine.ProcessInstance) error {
	switch {
	case inst.Status == engine.StateDone:
		return engine.Errorf(engine.CodeConflict, "this registration is already submitted and waits for payment")
	case engine.Finished(inst.Status):
		return engine.Errorf(engine.CodeConflict, "this registration is already %s", stateWord(inst.Status))
	}
	return nil
}

// submitSelection stores which persons are registered and opens the first question.
func (s *Service) submitSelection(ctx context.Context, tx bun.Tx, inst *engine.ProcessInstance, def *definition.Definition, in NextInput, now time.Time) (*Form, error) {
	persons, err := store.LinkedPersons(ctx, tx, inst.UserKey, inst.OrganisationID)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(persons))
	for i, p := range persons {
		ids[i] = p.ID
	}
	statuses, err := store.MembershipStatuses(ctx, tx, inst.RelatedEntityID, ids)
	if err != nil {
		return nil, err
	}
	types, err := store.MembershipTypes(ctx, tx, inst.OrganisationID)
	if err != nil {
		return nil, err
	}
	chosen, selected, err := choosePersons(inst, in, persons, statuses, types)
	if err != nil {
		return nil, err
	}
	// A first selection (state INIT) has no earlier selection or answers to
	// replace or pre-fill, which saves two statements on the common path.
	reselect := inst.Status != engine.StateInit
	var data []engine.ProcessData
	if reselect {
		if data, err = store.InstanceData(ctx, tx, inst.ID); err != nil {
			return nil, err
		}
	}
	// The first question is the first one on the path of the persons
	// chosen: a step may apply to none of them (the last step always does).
	answers := answersOf(data)
	// Persons new to the registration start from last season's answers
	// (prefill.go), stored before the path is computed since a carried
	// answer may decide a condition.
	var fresh []int64
	for _, id := range chosen {
		if !hasAnswers(answers, id) {
			fresh = append(fresh, id)
		}
	}
	carried, err := s.prefillFromLastSeason(ctx, tx, inst, def, fresh, now)
	if err != nil {
		return nil, err
	}
	for stepID, byPerson := range carried {
		if answers[stepID] == nil {
			answers[stepID] = map[int64]string{}
		}
		maps.Copy(answers[stepID], byPerson)
	}
	number := def.RouteFor(selected, inst.Period.StartDate, answers).Next(0)
	first := def.Steps[number-1].ID
	inst.SelectedPersons, inst.CurrentStepID, inst.Status = chosen, &first, engine.StateRunning
	if err := store.BumpVersion(ctx, tx, inst, now, "selected_persons", "current_step_id", "status"); err != nil {
		return nil, err
	}
	if err := store.StoreSelection(ctx, tx, inst.ID, reselect, chosen, now); err != nil {
		return nil, err
	}
	return questionForm(inst, def, number, selected, answers), nil
}

// choosePersons checks a selection (in.People) against the persons linked
// to the registration's user key, their statuses for the period and the
// organisation's membership types, and returns the ids chosen, in the
// order given, and their persons.
func choosePersons(inst *engine.ProcessInstance, in NextInput, persons []engine.Person, statuses map[int64]string, types []engine.MembershipType) ([]int64, []engine.Person, error) {
	byID := make(map[int64]engine.Person, len(persons))
	for _, p := range persons {
		byID[p.ID] = p
	}
	// A person named twice is a malformed request, as on a question step
	// (planAnswers), whatever either entry's selected says.
	var fields []engine.FieldError
	for i, p := range in.People {
		if slices.ContainsFunc(in.People[:i], func(q PersonInput) bool { return q.ID == p.ID }) {
			fields = append(fields, engine.FieldError{Field: fmt.Sprintf("people[%d].id", i), Message: "this person appears twice"})
		}
	}
	if len(fields) > 0 {
		return nil, nil, &engine.Error{Code: engine.CodeInvalid, Message: "The request names a person twice.", Fields: fields}
	}
	var chosen []int64
	var problems []engine.PersonError
	for _, p := range in.People {
		if p.Selected != nil && !*p.Selected {
			continue
		}
		person, linked := byID[p.ID]
		switch {
		case !linked:
			problems = append(problems, engine.Problem{Key: "not_linked", Text: "This person cannot be registered with this link."}.ForPerson(p.ID))
		case statuses[p.ID] != engine.PersonAvailable:
			problems = append(problems, engine.Problem{Key: "already_" + strings.ToLower(strings.ReplaceAll(statuses[p.ID], " ", "_")), Text: fmt.Sprintf("%s %s is already %s.", person.FirstName, person.LastName, lowerStatus(statuses[p.ID])),
				Param: person.FirstName + " " + person.LastName}.ForPerson(p.ID))
		case chooseMembershipType(types, person.DateOfBirth, inst.Period.StartDate) == nil:
			problems = append(problems, engine.Problem{Key: "not_eligible", Text: fmt.Sprintf("%s %s is not eligible for any membership type of this period.", person.FirstName, person.LastName),
				Param: person.FirstName + " " + person.LastName}.ForPerson(p.ID))
		default:
			chosen = append(chosen, p.ID)
		}
	}
	if len(problems) > 0 {
		return nil, nil, &engine.Error{Code: engine.CodeValidation, Message: "Some persons cannot be selected.", People: problems, ProcessID: strconv64(inst.ID)}
	}
	if len(chosen) == 0 {
		return nil, nil, &engine.Error{Code: engine.CodeValidation, Message: "Select at least one person.", ProcessID: strconv64(inst.ID)}
	}
	selected := make([]engine.Person, len(chosen))
	for i, id := range chosen {
		selected[i] = byID[id]
	}
	return chosen, selected, nil
}

// hasAnswers reports whether a person has any answer in answers.
func hasAnswers(answers map[int64]map[int64]string, personID int64) bool {
	for _, byPerson := range answers {
		if _, ok := byPerson[personID]; ok {
			return true
		}
	}
	return false
}

func lowerStatus(status string) string {
	switch status {
	case engine.PersonRegistered:
		return "registered"
	case engine.PersonPendingPayment:
		return "registered and waiting for payment"
	}
	return status
}

func strconv64(id int64) string { return fmt.Sprint(id) }

// answerPlan is a question step's answers, validated, and where they lead:
// everything read and decided before anything is written.
type answerPlan struct {
	number      int // the step answered
	step        *engine.ProcessStep
	selected    []engine.Person
	conditional bool                       // the definition has conditions: the path depends on the answers
	data        []engine.ProcessData       // the saved answers (in a transaction with the selections)
	all         map[int64]map[int64]string // the saved answers by step and person
	withThis    map[int64]map[int64]string // all with this step's answers, when conditional
	answers     map[int64]string           // this step's answers by person
	route       *definition.Route
	nextNumber  int // 0 after the last question: the commit
}

func (p *answerPlan) last() bool { return p.nextNumber == 0 }

// readPlanInputs reads what planAnswers needs in a transaction: the
// selected persons and the saved answers (with the selections:
// deleteOffPathAnswers needs all of them).
func readPlanInputs(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance) ([]engine.Person, []engine.ProcessData, error) {
	selected, err := store.PersonsByID(ctx, db, inst.SelectedPersons)
	if err != nil {
		return nil, nil, err
	}
	data, err := store.InstanceData(ctx, db, inst.ID)
	return selected, data, err
}

// planAnswers validates the answers of in for question number and works
// out the next question on the path, from the selected persons and the
// saved answers (data).
func planAnswers(inst *engine.ProcessInstance, def *definition.Definition, number int, in NextInput, selected []engine.Person, data []engine.ProcessData) (*answerPlan, error) {
	step := &def.Steps[number-1]
	given := map[int64]*string{}
	var fields []engine.FieldError
	for i, p := range in.People {
		if !slices.Contains(inst.SelectedPersons, p.ID) {
			fields = append(fields, engine.FieldError{Field: fmt.Sprintf("people[%d].id", i), Message: "this person is not part of the registration"})
			continue
		}
		if _, dup := given[p.ID]; dup {
			fields = append(fields, engine.FieldError{Field: fmt.Sprintf("people[%d].id", i), Message: "this person appears twice"})
			continue
		}
		given[p.ID] = p.Answer
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeInvalid, Message: "The request names persons that are not part of this registration.", Fields: fields}
	}
	// With conditions the path depends on the saved answers; without, on
	// the persons' ages only.
	conditional := def.HasConditions()
	all := answersOf(data)
	r := def.RouteFor(selected, inst.Period.StartDate, all)
	inputs := make([]answerFor, len(selected))
	for i, p := range selected {
		inputs[i] = answerFor{PersonID: p.ID, Hide: r.Hides(number, p.ID), Answer: given[p.ID]}
	}
	answers, problems := validateStep(step, def.Patterns[step.ID], inputs)
	if len(problems) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "Some answers are not valid.", People: problems,
			ProcessID: strconv64(inst.ID), Step: number}
	}
	var withThis map[int64]map[int64]string
	if conditional {
		// The answer just given can change which steps follow.
		withThis = maps.Clone(all)
		withThis[step.ID] = answers
		r = def.RouteFor(selected, inst.Period.StartDate, withThis)
	}
	return &answerPlan{number: number, step: step, selected: selected, conditional: conditional, data: data,
		all: all, withThis: withThis, answers: answers, route: r, nextNumber: r.Next(number)}, nil
}

// advance stores plan's answers and moves inst to the next question, on
// PostgreSQL in one statement (storeStepAnswers), and shows it with the
// answers saved for it (after Back).
func (s *Service) advance(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, def *definition.Definition, plan *answerPlan, now time.Time) (*Form, error) {
	next := &def.Steps[plan.nextNumber-1]
	inst.CurrentStepID, inst.Status = &next.ID, engine.StateRunning
	if err := s.storeStepAnswers(ctx, db, inst, now, plan.step.ID, plan.answers, plan.all[plan.step.ID] != nil); err != nil {
		return nil, err
	}
	shown := map[int64]map[int64]string{next.ID: plan.all[next.ID]}
	if plan.conditional {
		shown = plan.withThis
	}
	return questionForm(inst, def, plan.nextNumber, plan.selected, shown), nil
}

// submitAnswers stores the answers of plan, then returns the next question
// on the path or, after the last one, commits (or, with in.HoldCommit,
// stays at the last step for a check of the answers).
func (s *Service) submitAnswers(ctx context.Context, tx bun.Tx, inst *engine.ProcessInstance, def *definition.Definition, plan *answerPlan, in NextInput, now time.Time) (*Form, *engine.Order, error) {
	if !plan.last() { // nextQuestion answers these; here only if it left one to the transaction
		form, err := s.advance(ctx, tx, inst, def, plan, now)
		return form, nil, err
	}
	step, selected, data, all, answers := plan.step, plan.selected, plan.data, plan.all, plan.answers
	if in.HoldCommit {
		if err := store.BumpVersion(ctx, tx, inst, now, "status"); err != nil {
			return nil, nil, err
		}
		if err := store.StoreAnswers(ctx, tx, inst.ID, step.ID, all[step.ID] != nil, answers, now); err != nil {
			return nil, nil, err
		}
		all[step.ID] = answers
		return questionForm(inst, def, plan.number, selected, all), nil, nil
	}
	inst.CurrentStepID, inst.Status = nil, engine.StateDone
	if err := store.BumpVersion(ctx, tx, inst, now, "current_step_id", "status"); err != nil {
		return nil, nil, err
	}
	if err := store.StoreAnswers(ctx, tx, inst.ID, step.ID, all[step.ID] != nil, answers, now); err != nil {
		return nil, nil, err
	}
	all[step.ID] = answers
	// A committed registration cannot come back to a step, so the answers
	// off its final path go: what stays is exactly what was committed.
	if err := definition.DeleteOffPathAnswers(ctx, tx, inst.ID, data, def, plan.route, step.ID); err != nil {
		return nil, nil, err
	}
	order, err := s.commit(ctx, tx, inst, def, selected, all, in.PaymentMethod, now)
	if err != nil {
		return nil, nil, err
	}
	form := baseForm(inst, def, len(def.Steps)+1)
	for _, p := range selected {
		form.People = append(form.People, FormPerson{
			ID: p.ID, FirstName: p.FirstName, LastName: p.LastName, DateOfBirth: p.DateOfBirth,
			Selected: true, Status: engine.PersonPendingPayment,
		})
	}
	return form, order, nil
}
