package engine

import (
	"context"
	"errors"
)

// ErrNotLinked says a user key has no persons in the period's organisation.
var ErrNotLinked = errors.New("user key not linked to the organisation")

// registrationTarget loads a period that accepts registrations and the
// persons userKey may register there.
func (s *Service) registrationTarget(ctx context.Context, userKey string, periodID int64, orgID *int64) (*MembershipPeriod, []Person, error) {
	period := new(MembershipPeriod)
	if err := s.db.NewSelect().Model(period).Where("id = ?", periodID).Scan(ctx); err != nil {
		return nil, nil, notFoundOr(err, "membership period")
	}
	if orgID != nil && *orgID != period.OrganisationID {
		return nil, nil, Errorf(CodeNotFound, "membership period not found")
	}
	if !period.AcceptsRegistrations(s.clock()) {
		return nil, nil, Errorf(CodeConflict, "registration for %s is closed", period.Name)
	}
	persons, err := linkedPersons(ctx, s.db, userKey, period.OrganisationID)
	if err != nil {
		return nil, nil, err
	}
	if len(persons) == 0 {
		return nil, nil, &Error{Code: CodeNotFound, Message: "no persons are linked to this user key in the period's organisation", Err: ErrNotLinked}
	}
	return period, persons, nil
}

// CheckRegistrationAccess says whether userKey may register for a period:
// the period exists and is open, and the user key is linked to persons of
// its organisation (ErrNotLinked otherwise). The hash-link guard uses it.
func (s *Service) CheckRegistrationAccess(ctx context.Context, userKey string, periodID int64) error {
	_, _, err := s.registrationTarget(ctx, userKey, periodID, nil)
	return err
}

// Overview is a registration's start page: the current form, every linked
// person with their status, and the order once committed.
type Overview struct {
	Form    *Form
	Period  MembershipPeriod
	Persons []FormPerson
	Order   *Quote // set when the registration is committed (DONE)
}

// LoadOverview loads (or starts) the registration of userKey for a period.
func (s *Service) LoadOverview(ctx context.Context, userKey string, periodID int64) (*Overview, error) {
	form, _, err := s.LoadMembershipForm(ctx, userKey, periodID, nil)
	if err != nil {
		return nil, err
	}
	period, persons, err := s.registrationTarget(ctx, userKey, periodID, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(persons))
	for i, p := range persons {
		ids[i] = p.ID
	}
	statuses, err := membershipStatuses(ctx, s.db, periodID, ids)
	if err != nil {
		return nil, err
	}
	o := &Overview{Form: form, Period: *period}
	for _, p := range persons {
		o.Persons = append(o.Persons, FormPerson{ID: p.ID, FirstName: p.FirstName, LastName: p.LastName,
			DateOfBirth: p.DateOfBirth, Status: statuses[p.ID], CanSelect: statuses[p.ID] == PersonAvailable})
	}
	if form.State == StateDone {
		q, err := s.Quote(ctx, userKey, form.ProcessIDString())
		if err != nil {
			return nil, err
		}
		o.Order = &q
	}
	return o, nil
}
