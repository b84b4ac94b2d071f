package registration

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// pricingInputs loads what pricing needs beyond the instance: membership
// types, the types each person held in the previous period, and the rules.
func pricingInputs(ctx context.Context, tx bun.IDB, inst *engine.ProcessInstance, personIDs []int64) ([]engine.MembershipType, map[int64][]int64, []engine.PriceRule, error) {
	types, err := store.MembershipTypes(ctx, tx, inst.OrganisationID)
	if err != nil {
		return nil, nil, nil, err
	}
	previous, err := store.PreviousMembershipTypes(ctx, tx, inst.OrganisationID, inst.Period.StartDate, personIDs)
	if err != nil {
		return nil, nil, nil, err
	}
	rules, err := store.PriceRules(ctx, tx, inst.RelatedEntityID)
	if err != nil {
		return nil, nil, nil, err
	}
	return types, previous, rules, nil
}

// quoteFor prices the selected persons with their answers.
func (s *Service) quoteFor(ctx context.Context, tx bun.IDB, inst *engine.ProcessInstance, def *definition.Definition, selected []engine.Person, answers map[int64]map[int64]string, now time.Time) (Quote, []PricedPerson, error) {
	types, previous, rules, err := pricingInputs(ctx, tx, inst, inst.SelectedPersons)
	if err != nil {
		return Quote{}, nil, err
	}
	// The lines are in the member's language: the review shows them, the
	// commit freezes them so (the definition's own texts are in it already).
	lang := engine.LanguageOf(ctx)
	if lang == "" {
		lang = inst.Language
	}
	engine.LocalizeRules(rules, lang)
	engine.LocalizeTypes(types, lang)
	// Only answers on the path are priced: a skipped priced step adds nothing.
	answers = def.RouteFor(selected, inst.Period.StartDate, answers).Answered(def, answers)
	people := make([]PricedPerson, len(selected))
	for i, p := range selected {
		own := map[int64]string{}
		for stepID, byPerson := range answers {
			if v, ok := byPerson[p.ID]; ok {
				own[stepID] = v
			}
		}
		t := chooseMembershipType(types, p.DateOfBirth, inst.Period.StartDate)
		mt := engine.MemberNew
		if t != nil {
			mt = memberTypeFor(def.Steps, own, previous[p.ID], t.ID)
		}
		people[i] = PricedPerson{Person: p, Type: t, MemberType: mt, Answers: own}
	}
	q, err := PriceRegistration(inst.Period, def.Steps, people, rules, now)
	return q, people, err
}

// commit turns a fully answered instance into memberships pending payment
// and an unpaid order with frozen lines, inside the caller's transaction;
// method is the payment method the member chose ("" for the club's
// default); now is the transaction's time, for the price and the records.
func (s *Service) commit(ctx context.Context, tx bun.Tx, inst *engine.ProcessInstance, def *definition.Definition, selected []engine.Person, answers map[int64]map[int64]string, method string, now time.Time) (*engine.Order, error) {
	if err := checkStillLinked(ctx, tx, inst, len(def.Steps), selected); err != nil {
		return nil, err
	}
	// The order is in the period's currency: a method that cannot take it
	// (direct debit outside the euro) is refused before anything is written.
	method, err := payment.Of(s.Service).CheckPaymentMethod(ctx, tx, inst.OrganisationID, inst.Period.Currency, method)
	if err != nil {
		return nil, err
	}
	quote, people, err := s.quoteFor(ctx, tx, inst, def, selected, answers, now)
	if err != nil {
		return nil, err
	}
	memberships := make([]engine.Membership, len(people))
	for i, pp := range people {
		memberships[i] = engine.Membership{
			PersonID: pp.Person.ID, PeriodID: inst.RelatedEntityID, MembershipTypeID: pp.Type.ID,
			MemberType: pp.MemberType, Status: engine.MembershipPending, ProcessInstanceID: &inst.ID, CreatedAt: now,
		}
	}
	if err := store.InsertMemberships(ctx, tx, memberships); err != nil {
		return nil, err
	}
	order := &engine.Order{
		ProcessInstanceID: inst.ID, OrganisationID: inst.OrganisationID, PeriodID: inst.RelatedEntityID,
		UserKey: inst.UserKey, Status: engine.OrderUnpaid, TotalMinor: quote.TotalMinor, Currency: quote.Currency, CreatedAt: now,
		PaymentMethod: method, Lines: make([]engine.OrderLine, len(quote.Lines)),
	}
	for i, l := range quote.Lines {
		order.Lines[i] = engine.OrderLine{LineNo: i + 1, PersonID: l.PersonID, Kind: l.Kind,
			Code: l.Code, Description: l.Description, AmountMinor: l.AmountMinor, Currency: quote.Currency}
	}
	if err := store.InsertOrder(ctx, tx, order); err != nil {
		return nil, err
	}
	if err := definition.RecordConsents(ctx, tx, inst, def, selected, answers, now); err != nil {
		return nil, err
	}
	personIDs := make([]int64, len(people))
	for i, pp := range people {
		personIDs[i] = pp.Person.ID
	}
	if err := engine.EmitEvent(ctx, tx, inst.OrganisationID, engine.EventRegistrationCommitted, engine.RegistrationEventData{RegistrationID: inst.ID,
		PeriodID: inst.RelatedEntityID, UserKey: inst.UserKey, PersonIDs: personIDs, OrderID: &order.ID,
		TotalMinor: &order.TotalMinor, Currency: order.Currency}, now); err != nil {
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
func checkStillLinked(ctx context.Context, tx bun.Tx, inst *engine.ProcessInstance, step int, selected []engine.Person) error {
	if len(inst.SelectedPersons) == 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Select at least one person.", ProcessID: strconv64(inst.ID), Step: step}
	}
	linked, err := store.LinkedAmong(ctx, tx, inst.UserKey, inst.OrganisationID, inst.SelectedPersons)
	if err != nil {
		return err
	}
	names := make(map[int64]string, len(selected))
	for _, p := range selected {
		names[p.ID] = p.FirstName + " " + p.LastName
	}
	var problems []engine.PersonError
	for _, id := range inst.SelectedPersons {
		name, known := names[id]
		if !known {
			name = "A selected person"
		}
		if !known || !slices.Contains(linked, id) {
			problems = append(problems, engine.PersonError{PersonID: id,
				Message: name + " can no longer be registered with this link: the organisation removed the link meanwhile. Start again to choose persons."})
		}
	}
	if len(problems) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Some persons can no longer be registered with this link.",
			People: problems, ProcessID: strconv64(inst.ID), Step: step}
	}
	return nil
}

// Quote prices a running registration as its commit would, for a
// check-your-answers page. It writes nothing.
func (s *Service) Quote(ctx context.Context, userKey, processID string) (_ Quote, err error) {
	inst, err := store.LoadInstance(ctx, s.DB(), userKey, processID)
	if err != nil {
		return Quote{}, err
	}
	if inst.Status == engine.StateDone {
		order, err := store.LiveOrder(ctx, s.DB(), inst.ID)
		if err != nil {
			return Quote{}, err
		}
		q := Quote{TotalMinor: order.TotalMinor, Currency: order.Currency}
		for _, l := range order.Lines {
			q.Lines = append(q.Lines, QuoteLine{PersonID: l.PersonID, Kind: l.Kind, Code: l.Code, Description: l.Description, AmountMinor: l.AmountMinor})
		}
		return q, nil
	}
	def, err := definition.Of(s.Service).Cache().Get(ctx, s.DB(), inst.DefinitionID)
	if err != nil {
		return Quote{}, err
	}
	selected, err := store.PersonsByID(ctx, s.DB(), inst.SelectedPersons)
	if err != nil {
		return Quote{}, err
	}
	data, err := store.InstanceData(ctx, s.DB(), inst.ID)
	if err != nil {
		return Quote{}, err
	}
	q, _, err := s.quoteFor(ctx, s.DB(), inst, def, selected, answersOf(data), s.Clock())
	return q, err
}
