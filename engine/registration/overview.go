package registration

import (
	"context"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// registrationTarget loads a period that accepts registrations and the
// persons userKey may register there. A period whose organisation has no
// persons linked to userKey answers exactly as a period that does not
// exist, before anything about it is looked at: whether it is open, and its
// name, belong to its own organisation (the review found both leaking to any
// signed-in user who counted period ids).
func (s *Service) registrationTarget(ctx context.Context, db bun.IDB, userKey string, periodID int64, orgID *int64) (*engine.MembershipPeriod, []engine.Person, error) {
	period, err := store.LoadPeriod(ctx, db, periodID)
	if err != nil {
		return nil, nil, err
	}
	period.Localize(engine.LanguageOf(ctx))
	var persons []engine.Person
	if visibleTarget(ctx, period, orgID) { // another organisation's period has none of them
		if persons, err = store.LinkedPersons(ctx, db, userKey, period.OrganisationID); err != nil {
			return nil, nil, err
		}
	}
	if err := s.checkTarget(ctx, period, persons, orgID); err != nil {
		return nil, nil, err
	}
	return period, persons, nil
}

// checkTarget is registrationTarget's verdict on a period and the persons
// linked to the user key in its organisation: not found for a period of
// another organisation than orgID (when given) or the request's organisation, or
// without persons; a conflict for a period that is closed.
func (s *Service) checkTarget(ctx context.Context, period *engine.MembershipPeriod, persons []engine.Person, orgID *int64) error {
	if !visibleTarget(ctx, period, orgID) || len(persons) == 0 {
		return engine.Errorf(engine.CodeNotFound, "membership period not found")
	}
	if !period.AcceptsRegistrations(s.Clock()) {
		return engine.Errorf(engine.CodeConflict, "registration for %s is closed", period.Name)
	}
	return nil
}

// visibleTarget says whether period belongs to orgID (when given) and to
// the request's organisation (engine/organisations.go).
func visibleTarget(ctx context.Context, period *engine.MembershipPeriod, orgID *int64) bool {
	return (orgID == nil || *orgID == period.OrganisationID) && engine.InScope(ctx, period.OrganisationID)
}

// CheckRegistrationAccess says whether userKey may register for a period:
// the user key has persons in the period's organisation (not found
// otherwise, as for an unknown period) and the period is open (conflict).
// The hash-link guard uses it.
func (s *Service) CheckRegistrationAccess(ctx context.Context, userKey string, periodID int64) (err error) {
	_, _, err = s.registrationTarget(ctx, s.DB(), userKey, periodID, nil)
	return err
}

// Overview is a registration's start page: the current form, every linked
// person with their status, and the order once committed.
type Overview struct {
	Form    *Form
	Period  engine.MembershipPeriod
	Persons []FormPerson
	Order   *Quote // set when the registration is committed (DONE)
}

// LoadOverview loads (or starts) the registration of userKey for a period.
func (s *Service) LoadOverview(ctx context.Context, userKey string, periodID int64) (_ *Overview, err error) {
	payment.Of(s.Service).ReconcileRegistration(ctx, userKey, periodID) // before the load, outside any transaction: it may ask the provider
	var (
		form     *Form
		period   *engine.MembershipPeriod
		persons  []engine.Person
		statuses map[int64]string
	)
	err = s.OnOneConn(ctx, func(db bun.IDB) error {
		var err error
		if form, _, err = s.loadMembershipForm(ctx, db, userKey, periodID, nil); err != nil {
			return err
		}
		if period, persons, err = s.registrationTarget(ctx, db, userKey, periodID, nil); err != nil {
			return err
		}
		ids := make([]int64, len(persons))
		for i, p := range persons {
			ids[i] = p.ID
		}
		statuses, err = store.MembershipStatuses(ctx, db, periodID, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	o := &Overview{Form: form, Period: *period}
	for _, p := range persons {
		o.Persons = append(o.Persons, FormPerson{ID: p.ID, FirstName: p.FirstName, LastName: p.LastName,
			DateOfBirth: p.DateOfBirth, Status: statuses[p.ID], CanSelect: statuses[p.ID] == engine.PersonAvailable})
	}
	if form.State == engine.StateDone {
		q, err := s.Quote(ctx, userKey, form.ProcessIDString())
		if err != nil {
			return nil, err
		}
		o.Order = &q
	}
	return o, nil
}
