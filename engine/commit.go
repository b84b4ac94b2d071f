package engine

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// pricingInputs loads what pricing needs beyond the instance: membership
// types, the types each person held in the previous period, and the rules.
func pricingInputs(ctx context.Context, tx bun.IDB, inst *ProcessInstance, personIDs []int64) ([]MembershipType, map[int64][]int64, []PriceRule, error) {
	types, err := membershipTypes(ctx, tx, inst.OrganisationID)
	if err != nil {
		return nil, nil, nil, err
	}
	previous, err := previousMembershipTypes(ctx, tx, inst.OrganisationID, inst.Period.StartDate, personIDs)
	if err != nil {
		return nil, nil, nil, err
	}
	rules, err := priceRules(ctx, tx, inst.RelatedEntityID)
	if err != nil {
		return nil, nil, nil, err
	}
	return types, previous, rules, nil
}

// quoteFor prices the selected persons with their answers.
func (s *Service) quoteFor(ctx context.Context, tx bun.IDB, inst *ProcessInstance, def *definition, selected []Person, answers map[int64]map[int64]string, now time.Time) (Quote, []pricedPerson, error) {
	types, previous, rules, err := pricingInputs(ctx, tx, inst, inst.SelectedPersons)
	if err != nil {
		return Quote{}, nil, err
	}
	people := make([]pricedPerson, len(selected))
	for i, p := range selected {
		own := map[int64]string{}
		for stepID, byPerson := range answers {
			if v, ok := byPerson[p.ID]; ok {
				own[stepID] = v
			}
		}
		t := chooseMembershipType(types, p.DateOfBirth, inst.Period.StartDate)
		mt := MemberNew
		if t != nil {
			mt = memberTypeFor(def.Steps, own, previous[p.ID], t.ID)
		}
		people[i] = pricedPerson{Person: p, Type: t, MemberType: mt, Answers: own}
	}
	q, err := priceRegistration(inst.Period, def.Steps, people, rules, now)
	return q, people, err
}

// commit turns a fully answered instance into memberships pending payment
// and an unpaid order with frozen lines, inside the caller's transaction;
// now is the transaction's time, for the price and the records.
func (s *Service) commit(ctx context.Context, tx bun.Tx, inst *ProcessInstance, def *definition, selected []Person, answers map[int64]map[int64]string, now time.Time) (*Order, error) {
	if err := checkStillLinked(ctx, tx, inst, len(def.Steps), selected); err != nil {
		return nil, err
	}
	quote, people, err := s.quoteFor(ctx, tx, inst, def, selected, answers, now)
	if err != nil {
		return nil, err
	}
	memberships := make([]Membership, len(people))
	for i, pp := range people {
		memberships[i] = Membership{
			PersonID: pp.Person.ID, PeriodID: inst.RelatedEntityID, MembershipTypeID: pp.Type.ID,
			MemberType: pp.MemberType, Status: MembershipPending, ProcessInstanceID: &inst.ID, CreatedAt: now,
		}
	}
	if err := insertMemberships(ctx, tx, memberships); err != nil {
		return nil, err
	}
	order := &Order{
		ProcessInstanceID: inst.ID, OrganisationID: inst.OrganisationID, PeriodID: inst.RelatedEntityID,
		UserKey: inst.UserKey, Status: OrderUnpaid, TotalMinor: quote.TotalMinor, Currency: quote.Currency, CreatedAt: now,
		Lines: make([]OrderLine, len(quote.Lines)),
	}
	for i, l := range quote.Lines {
		order.Lines[i] = OrderLine{LineNo: i + 1, PersonID: l.PersonID, Kind: l.Kind,
			Code: l.Code, Description: l.Description, AmountMinor: l.AmountMinor, Currency: quote.Currency}
	}
	if err := insertOrder(ctx, tx, order); err != nil {
		return nil, err
	}
	return order, nil
}

// checkStillLinked refuses the commit when a selected person is no longer
// linked to the user key: links are checked at selection, but the
// organisation may unlink a person while the member answers the questions,
// and a commit must not register someone the key may no longer act for. It
// goes by the instance's selection, not by the persons loaded for it, so
// that a person who could not be loaded is refused too rather than
// silently left out of the order. The links are read with a share lock
// (linkedAmong), so an unlink cannot slip in after the check.
func checkStillLinked(ctx context.Context, tx bun.Tx, inst *ProcessInstance, step int, selected []Person) error {
	if len(inst.SelectedPersons) == 0 {
		return &Error{Code: CodeValidation, Message: "Select at least one person.", ProcessID: strconv64(inst.ID), Step: step}
	}
	linked, err := linkedAmong(ctx, tx, inst.UserKey, inst.OrganisationID, inst.SelectedPersons)
	if err != nil {
		return err
	}
	names := make(map[int64]string, len(selected))
	for _, p := range selected {
		names[p.ID] = p.FirstName + " " + p.LastName
	}
	var problems []PersonError
	for _, id := range inst.SelectedPersons {
		name, known := names[id]
		if !known {
			name = "A selected person"
		}
		if !known || !slices.Contains(linked, id) {
			problems = append(problems, PersonError{PersonID: id,
				Message: name + " can no longer be registered with this link: the organisation removed the link meanwhile. Start again to choose persons."})
		}
	}
	if len(problems) > 0 {
		return &Error{Code: CodeValidation, Message: "Some persons can no longer be registered with this link.",
			People: problems, ProcessID: strconv64(inst.ID), Step: step}
	}
	return nil
}

// Quote prices a running registration as its commit would, for a
// check-your-answers page. It writes nothing.
func (s *Service) Quote(ctx context.Context, userKey, processID string) (_ Quote, err error) {
	defer classifyUnavailable(&err)
	inst, err := loadInstance(ctx, s.db, userKey, processID)
	if err != nil {
		return Quote{}, err
	}
	if inst.Status == StateDone {
		order, err := liveOrder(ctx, s.db, inst.ID)
		if err != nil {
			return Quote{}, err
		}
		q := Quote{TotalMinor: order.TotalMinor, Currency: order.Currency}
		for _, l := range order.Lines {
			q.Lines = append(q.Lines, QuoteLine{PersonID: l.PersonID, Kind: l.Kind, Code: l.Code, Description: l.Description, AmountMinor: l.AmountMinor})
		}
		return q, nil
	}
	def, err := s.defs.get(ctx, s.db, inst.DefinitionID)
	if err != nil {
		return Quote{}, err
	}
	selected, err := personsByID(ctx, s.db, inst.SelectedPersons)
	if err != nil {
		return Quote{}, err
	}
	data, err := instanceData(ctx, s.db, inst.ID)
	if err != nil {
		return Quote{}, err
	}
	q, _, err := s.quoteFor(ctx, s.db, inst, def, selected, answersOf(data), s.clock())
	return q, err
}

// Reset deletes every answer of an instance and returns it to person
// selection in state INIT. A committed but unpaid registration is undone:
// its memberships and order are cancelled (kept for the record, never
// deleted) and pending payment attempts are cancelled. A completed
// registration cannot be reset.
func (s *Service) Reset(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	var form *Form
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		inst, err := loadInstance(ctx, tx, userKey, processID)
		if err != nil {
			return err
		}
		if finished(inst.Status) {
			return Errorf(CodeConflict, "this registration is already %s and cannot be reset", stateWord(inst.Status))
		}
		wasDone := inst.Status == StateDone
		now := s.clock()
		inst.Status, inst.CurrentStepID, inst.SelectedPersons = StateInit, nil, []int64{}
		if err := bumpVersion(ctx, tx, inst, now, "status", "current_step_id", "selected_persons"); err != nil {
			return err
		}
		if err := deleteInstanceData(ctx, tx, inst.ID); err != nil {
			return err
		}
		if wasDone {
			if err := cancelCommit(ctx, tx, inst.ID, now); err != nil {
				return err
			}
		}
		def, err := s.defs.get(ctx, tx, inst.DefinitionID)
		if err != nil {
			return err
		}
		form, err = s.selectionForm(ctx, tx, inst, def, nil)
		return err
	})
	return form, err
}

// cancelCommit cancels the pending memberships, the unpaid order and its pending payments of an instance.
// The payments go before the order: they are found through the unpaid order.
func cancelCommit(ctx context.Context, tx bun.Tx, instanceID int64, now time.Time) error {
	if err := cancelPendingMemberships(ctx, tx, instanceID); err != nil {
		return err
	}
	if err := cancelPendingPayments(ctx, tx, instanceID, now); err != nil {
		return err
	}
	return cancelUnpaidOrders(ctx, tx, instanceID)
}

// Resume returns the current step with its saved answers and sets the state
// to RUNNING (the spec's operation description; its example said RESUME).
// A committed registration resumes at its payment link.
func (s *Service) Resume(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	var form *Form
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		inst, err := loadInstance(ctx, tx, userKey, processID)
		if err != nil {
			return err
		}
		if finished(inst.Status) {
			return Errorf(CodeConflict, "this registration is already %s", stateWord(inst.Status))
		}
		if inst.Status == StateSuspended || inst.Status == StateResume {
			inst.Status = StateRunning
			if err := bumpVersion(ctx, tx, inst, s.clock(), "status"); err != nil {
				return err
			}
		}
		form, err = s.formFor(ctx, tx, inst, nil)
		return err
	})
	return form, err
}

// Back moves a running registration to the previous step and returns it
// with its saved answers; answering it again continues forward with the
// later answers pre-filled. step, when given, must be the current step.
func (s *Service) Back(ctx context.Context, userKey, processID string, step *int) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	return s.returnTo(ctx, userKey, processID, step, -1)
}

// ReturnTo moves a running registration back to an earlier step (0 is person
// selection), for the "Change" links of a check-your-answers page. The
// target must not be after the current step.
func (s *Service) ReturnTo(ctx context.Context, userKey, processID string, target int) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	if target < 0 {
		return nil, Errorf(CodeInvalid, "there is no step %d", target)
	}
	return s.returnTo(ctx, userKey, processID, nil, target)
}

// returnTo moves to target, or to the step before the current one when target is -1.
func (s *Service) returnTo(ctx context.Context, userKey, processID string, from *int, target int) (*Form, error) {
	var form *Form
	err := inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		inst, def, err := s.loadOpen(ctx, tx, userKey, processID)
		if err != nil {
			return err
		}
		current := 0
		if inst.CurrentStepID != nil {
			current = def.stepNumber(*inst.CurrentStepID)
		}
		if from != nil && *from != current {
			return Errorf(CodeConflict, "this registration changed in another window: it is at step %d", current)
		}
		if target == -1 {
			if current == 0 {
				return Errorf(CodeConflict, "there is no step before person selection")
			}
			target = current - 1
		}
		if target > current {
			return Errorf(CodeConflict, "step %d is not answered yet: the registration is at step %d", target, current)
		}
		if target == 0 {
			inst.CurrentStepID = nil
		} else {
			inst.CurrentStepID = &def.Steps[target-1].ID
		}
		inst.Status = StateRunning
		if err := bumpVersion(ctx, tx, inst, s.clock(), "current_step_id", "status"); err != nil {
			return err
		}
		form, err = s.formFor(ctx, tx, inst, nil)
		return err
	})
	return form, err
}
