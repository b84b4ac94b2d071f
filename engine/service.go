// Package engine is the membership registration domain: process definitions
// and instances, answer validation, pricing, memberships, orders and
// payments, stored with bun on PostgreSQL or SQLite. It knows nothing of HTTP.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// Service runs registrations. It is safe for concurrent use.
type Service struct {
	db       *bun.DB
	payments PaymentProvider
	defs     definitionCache
	now      func() time.Time
	log      *slog.Logger
}

// ServiceOption configures a Service.
type ServiceOption func(*Service)

// WithClock replaces the clock (tests use it for pricing windows).
func WithClock(now func() time.Time) ServiceOption { return func(s *Service) { s.now = now } }

// WithLogger sets the logger for events worth an operator's attention.
func WithLogger(l *slog.Logger) ServiceOption { return func(s *Service) { s.log = l } }

// NewService returns a Service on db that takes payments through payments.
func NewService(db *bun.DB, payments PaymentProvider, opts ...ServiceOption) *Service {
	s := &Service{db: db, payments: payments, now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// DB returns the service's database, for health checks.
func (s *Service) DB() *bun.DB { return s.db }

func (s *Service) clock() time.Time { return s.now().UTC() }

// parseProcessID reads a process id; anything malformed is simply not found.
func parseProcessID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, Errorf(CodeNotFound, "process instance not found")
	}
	return id, nil
}

// loadInstance loads an instance of userKey with its period. Instances of
// other user keys are not found, so their existence does not leak.
func loadInstance(ctx context.Context, db bun.IDB, userKey, processID string) (*ProcessInstance, error) {
	id, err := parseProcessID(processID)
	if err != nil {
		return nil, err
	}
	inst := new(ProcessInstance)
	// The period and the definition's active flag come in the same statement:
	// both can change while a registration runs.
	err = db.NewSelect().Model(inst).Relation("Period").Relation("Definition").
		Where("?TableAlias.id = ? AND ?TableAlias.user_key = ?", id, userKey).Scan(ctx)
	if err != nil {
		return nil, notFoundOr(err, "process instance")
	}
	return inst, nil
}

// loadOpen loads an instance of userKey that is neither committed nor
// finished, with its definition version.
func (s *Service) loadOpen(ctx context.Context, db bun.IDB, userKey, processID string) (*ProcessInstance, *definition, error) {
	inst, err := loadInstance(ctx, db, userKey, processID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOpen(inst); err != nil {
		return nil, nil, err
	}
	def, err := s.defs.get(ctx, db, inst.DefinitionID)
	if err != nil {
		return nil, nil, err
	}
	return inst, def, nil
}

// bumpVersion moves an instance to its new state if nobody else changed it
// since it was read: the optimistic lock that makes one of two racing
// submissions win and the other get a conflict.
func bumpVersion(ctx context.Context, db bun.IDB, inst *ProcessInstance, columns ...string) error {
	inst.Version++
	inst.UpdatedAt = time.Now().UTC()
	res, err := db.NewUpdate().Model(inst).
		Column(append(columns, "version", "updated_at")...).
		Where("id = ? AND version = ?", inst.ID, inst.Version-1).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("update process instance: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Errorf(CodeConflict, "this registration changed in another window; reload it to continue")
	}
	return nil
}

// linkedPersons lists the persons userKey may register in an organisation.
func linkedPersons(ctx context.Context, db bun.IDB, userKey string, orgID int64) ([]Person, error) {
	var persons []Person
	err := db.NewSelect().Model(&persons).
		Join("JOIN user_persons AS up ON up.person_id = person.id").
		Where("up.user_key = ? AND up.organisation_id = ?", userKey, orgID).
		Order("person.date_of_birth ASC", "person.id ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load linked persons: %w", err)
	}
	return persons, nil
}

// personsByID loads persons in the order of ids.
func personsByID(ctx context.Context, db bun.IDB, ids []int64) ([]Person, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []Person
	if err := db.NewSelect().Model(&rows).Where("id IN (?)", bun.In(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons: %w", err)
	}
	byID := make(map[int64]Person, len(rows))
	for _, p := range rows {
		byID[p.ID] = p
	}
	out := make([]Person, 0, len(ids))
	for _, id := range ids {
		if p, ok := byID[id]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// membershipStatuses returns the person status of each person for a period.
func membershipStatuses(ctx context.Context, db bun.IDB, periodID int64, personIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(personIDs))
	for _, id := range personIDs {
		out[id] = PersonAvailable
	}
	if len(personIDs) == 0 {
		return out, nil
	}
	var ms []Membership
	err := db.NewSelect().Model(&ms).Column("person_id", "status").
		Where("period_id = ? AND person_id IN (?) AND status IN (?)", periodID, bun.In(personIDs),
			bun.In([]string{MembershipPending, MembershipActive})).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load membership statuses: %w", err)
	}
	for _, m := range ms {
		if m.Status == MembershipActive {
			out[m.PersonID] = PersonRegistered
		} else {
			out[m.PersonID] = PersonPendingPayment
		}
	}
	return out, nil
}

// instanceData loads every stored answer and selection of an instance.
func instanceData(ctx context.Context, db bun.IDB, instanceID int64) ([]ProcessData, error) {
	var rows []ProcessData
	if err := db.NewSelect().Model(&rows).Where("instance_id = ?", instanceID).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load process data: %w", err)
	}
	return rows, nil
}

// answersOf indexes answers by step and person.
func answersOf(rows []ProcessData) map[int64]map[int64]string {
	out := map[int64]map[int64]string{}
	for _, r := range rows {
		if r.DataKey != DataAnswer || r.StepID == nil || r.PersonID == nil {
			continue
		}
		if out[*r.StepID] == nil {
			out[*r.StepID] = map[int64]string{}
		}
		out[*r.StepID][*r.PersonID] = r.DataValue
	}
	return out
}
