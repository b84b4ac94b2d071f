package registration

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// LoadMembershipForm returns the registration of userKey for a period: the
// unfinished one if there is one, otherwise a new instance in state INIT.
// created reports whether a new instance was made. orgID, when given, must
// be the period's organisation.
func (s *Service) LoadMembershipForm(ctx context.Context, userKey string, periodID int64, orgID *int64) (form *Form, created bool, err error) {
	if form, done, err := s.loadOpenForm(ctx, userKey, periodID, orgID); done {
		return form, false, err
	}
	payment.Of(s.Service).ReconcileRegistration(ctx, userKey, periodID) // before the load, outside any transaction: it may ask the provider
	err = s.OnOneConn(ctx, func(db bun.IDB) error {
		form, created, err = s.loadMembershipForm(ctx, db, userKey, periodID, orgID)
		return err
	})
	return form, created, err
}

// formStateFrom is where the form's state statement reads the open
// registration of a user key for a period ({id}): the condition of the
// unique index process_instances_one_open, which finds it, as
// findOpenInstance. No row when the period or an open registration is
// missing.
var formStateFrom = `
FROM membership_periods AS p
JOIN process_instances AS i ON i.related_entity_type = '` + engine.EntityMembership + `' AND i.related_entity_id = p.id
	AND i.definition_key = p.definition_key AND ` + store.OpenCondition("i.status") + `
JOIN process_definitions AS d ON d.id = i.definition_id
WHERE p.id = {id} AND i.user_key = {key}`

// formStateSQL is the read of a form load: the open registration with what
// a question step reads (questionColumns), the linked persons with their
// memberships of the period (linkedPersonsColumn) and whether the user key
// has an unpaid order for the period (reconcileRegistration's order).
var formStateSQL = newStateStatementsFrom(formStateFrom, slices.Concat(questionColumns, []string{linkedPersonsColumn,
	`EXISTS (SELECT 1 FROM orders AS o WHERE o.user_key = i.user_key AND o.period_id = p.id AND o.status = '` + string(engine.OrderUnpaid) + `')`})...)

// loadOpenForm is LoadMembershipForm for a registration that is open and
// has no unpaid order, the common case (a member going through the
// questions), in one prepared statement (formStateSQL) and the writes of
// resumeSuspended and touchActivity when they are due. done is false when
// the read found no open registration or an unpaid order: the caller
// takes the full path, which reconciles the order first, starts a
// registration or answers for a missing period. The checks and the form
// are loadMembershipForm's.
func (s *Service) loadOpenForm(ctx context.Context, userKey string, periodID int64, orgID *int64) (form *Form, done bool, err error) {
	var selectedJSON, answersJSON, personsJSON []byte
	var unpaid bool
	inst, found, err := s.readState(ctx, formStateSQL, periodID, userKey, &selectedJSON, &answersJSON, &personsJSON, &unpaid)
	if err != nil || !found || unpaid {
		return nil, err != nil, err
	}
	persons, statuses, err := decodeLinkedPersons(personsJSON)
	if err != nil {
		return nil, true, err
	}
	if err := s.checkTarget(ctx, inst.Period, persons, orgID); err != nil {
		return nil, true, err
	}
	if err := s.wake(ctx, s.DB(), inst); err != nil {
		return nil, true, err
	}
	state, err := questionStateOf(inst, selectedJSON, answersJSON)
	if err != nil {
		return nil, true, err
	}
	form, err = s.formFrom(ctx, s.DB(), inst, persons, statuses, state)
	return form, true, err
}

// OnOneConn runs fn with one pooled connection on PostgreSQL. A form load
// runs about eight statements outside a transaction; taking a connection
// once instead of before each of them keeps a busy pool from making the
// load queue eight times. On SQLite the pool is one connection: holding it
// would serialise loads that otherwise interleave, so fn gets the pool.
func (s *Service) OnOneConn(ctx context.Context, fn func(db bun.IDB) error) error {
	if s.DB().Dialect().Name() != dialect.PG {
		return fn(s.DB())
	}
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		return fmt.Errorf("take a database connection: %w", err)
	}
	defer conn.Close()
	return fn(conn)
}

// loadMembershipForm is LoadMembershipForm on db (see onOneConn).
func (s *Service) loadMembershipForm(ctx context.Context, db bun.IDB, userKey string, periodID int64, orgID *int64) (form *Form, created bool, err error) {
	period, persons, err := s.registrationTarget(ctx, db, userKey, periodID, orgID)
	if err != nil {
		return nil, false, err
	}
	inst, err := s.openInstance(ctx, db, userKey, period)
	if err != nil {
		return nil, false, err
	}
	if inst == nil {
		if inst, created, err = s.startInstance(ctx, db, userKey, period); err != nil {
			return nil, false, err
		}
	}
	if err := s.wake(ctx, db, inst); err != nil {
		return nil, false, err
	}
	inst.Period = period
	form, err = s.formFor(ctx, db, inst, persons)
	return form, created, err
}

// openInstance finds the unfinished instance of userKey for a period, or nil.
func (s *Service) openInstance(ctx context.Context, db bun.IDB, userKey string, period *engine.MembershipPeriod) (*engine.ProcessInstance, error) {
	return store.FindOpenInstance(ctx, db, userKey, period.ID, period.DefinitionKey)
}

// startInstance creates an INIT instance on the newest active definition
// version. Two tabs starting at once both end up on the same instance: the
// unique index lets one insert win and the other reads it; created says
// which of them made it.
func (s *Service) startInstance(ctx context.Context, db bun.IDB, userKey string, period *engine.MembershipPeriod) (*engine.ProcessInstance, bool, error) {
	def, err := definition.LatestActiveDefinition(ctx, db, period.OrganisationID, period.DefinitionKey)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return nil, false, engine.Errorf(engine.CodeConflict, "registration is not available: the registration form is inactive; please contact the organisation")
		}
		return nil, false, err
	}
	now := s.Clock()
	inst := &engine.ProcessInstance{
		DefinitionID: def.ID, DefinitionKey: def.Key, Status: engine.StateInit, StartTime: now,
		RelatedEntityType: engine.EntityMembership, RelatedEntityID: period.ID, OrganisationID: period.OrganisationID,
		UserKey: userKey, SelectedPersons: []int64{}, Version: 1, UpdatedAt: now,
	}
	if err := store.InsertInstance(ctx, db, inst); err != nil {
		e, conflict := engine.AsError(err)
		if !conflict || e.Code != engine.CodeConflict {
			return nil, false, err
		}
		existing, ferr := s.openInstance(ctx, db, userKey, period)
		if ferr == nil && existing != nil {
			return existing, false, nil
		}
		return nil, false, fmt.Errorf("create process instance: %w", e.Err)
	}
	return inst, true, nil
}

// wake counts a form load as the member's activity: a suspended
// registration resumes, and the activity is touched when due (lifecycle.go).
func (s *Service) wake(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance) error {
	if err := ResumeSuspended(ctx, db, inst, s.Clock()); err != nil {
		return err
	}
	return TouchActivity(ctx, db, inst, s.Clock())
}
