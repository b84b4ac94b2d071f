package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
)

// Store functions for process instances (process_instances).

// LoadInstance loads an instance of userKey with its period. Instances of
// other user keys are not found, so their existence does not leak.
func LoadInstance(ctx context.Context, db bun.IDB, userKey, processID string) (*engine.ProcessInstance, error) {
	id, err := ParseProcessID(processID)
	if err != nil {
		return nil, err
	}
	inst := new(engine.ProcessInstance)
	// The period and the definition's active flag come in the same statement:
	// both can change while a registration runs.
	err = db.NewSelect().Model(inst).Relation("Period").Relation("Definition").
		Where("?TableAlias.id = ? AND ?TableAlias.user_key = ?", id, userKey).Scan(ctx)
	if err != nil {
		return nil, engine.NotFoundOr(err, "process instance")
	}
	if !engine.InScope(ctx, inst.OrganisationID) { // another organisation's instance reads as none (organisations.go)
		return nil, engine.Errorf(engine.CodeNotFound, "process instance not found")
	}
	inst.Period.Localize(engine.LanguageOf(ctx)) // the member's pages name the period in their language
	return inst, nil
}

// FindOpenInstance finds the unfinished membership instance of userKey for
// a period on the definition key, or nil when there is none.
func FindOpenInstance(ctx context.Context, db bun.IDB, userKey string, periodID int64, definitionKey string) (*engine.ProcessInstance, error) {
	var found []engine.ProcessInstance
	err := db.NewSelect().Model(&found).
		Where("user_key = ? AND related_entity_type = ? AND related_entity_id = ? AND definition_key = ?",
			userKey, engine.EntityMembership, periodID, definitionKey).
		Where(OpenCondition("status")).
		Limit(1).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("find open instance: %w", err)
	}
	if len(found) == 0 {
		return nil, nil //nolint:nilnil // "none open" is a normal answer, not an error
	}
	return &found[0], nil
}

// InsertInstance stores a new instance. A unique violation (another open
// instance for the same period) is a conflict that wraps the violation.
func InsertInstance(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance) error {
	if inst.Language == "" {
		inst.Language = engine.LanguageOf(ctx)
	}
	if _, err := db.NewInsert().Model(inst).Exec(ctx); err != nil {
		if IsUniqueViolation(err) {
			return &engine.Error{Code: engine.CodeConflict, Message: "a registration for this period is already open", Err: err}
		}
		return fmt.Errorf("create process instance: %w", err)
	}
	return nil
}

// BumpVersion moves an instance to its new state if nobody else changed it
// since it was read: the optimistic lock that makes one of two racing
// submissions win and the other get a conflict.
func BumpVersion(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, now time.Time, columns ...string) error {
	MarkMoved(ctx, inst, now)
	if engine.LanguageOf(ctx) != "" {
		columns = append(columns, "language")
	}
	res, err := db.NewUpdate().Model(inst).
		Column(append(columns, "version", "updated_at")...).
		Where("id = ? AND version = ?", inst.ID, inst.Version-1).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("update process instance: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return ErrMovedMeanwhile
	}
	return nil
}

// LockInstance takes the row lock of an instance on PostgreSQL. SQLite runs
// one transaction at a time: it needs no lock.
func LockInstance(ctx context.Context, tx bun.Tx, instanceID int64) error {
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	if _, err := tx.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("id").Where("id = ?", instanceID).
		For("UPDATE").Exec(ctx); err != nil {
		return fmt.Errorf("lock process instance: %w", err)
	}
	return nil
}

// CompleteInstance moves a committed (DONE) instance to COMPLETED.
func CompleteInstance(ctx context.Context, db bun.IDB, instanceID int64, now time.Time) error {
	if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", engine.StateCompleted).Set("end_time = ?", now).
		Set("version = version + 1").Set("updated_at = ?", now).
		Where("id = ? AND status = ?", instanceID, engine.StateDone).Exec(ctx); err != nil {
		return fmt.Errorf("complete process instance: %w", err)
	}
	return nil
}

// OpenCondition is the condition of an unfinished instance on the column
// status, as the unique index process_instances_one_open has it (so that
// both databases use the index): three comparisons, not NOT IN, which on
// SQLite builds a temporary index at every evaluation (migration
// 20261216000003).
func OpenCondition(status string) string {
	return status + " <> '" + string(engine.StateCompleted) + "' AND " + status + " <> '" + string(engine.StateCancelled) + "' AND " +
		status + " <> '" + string(engine.StateFailed) + "'"
}

// ReopenInstance is completeInstance undone, for a registration whose
// money went back (a returned direct debit): COMPLETED back to DONE,
// committed and awaiting payment, where the reminders, the open payments
// and the pay link find it. Unless the household has started another
// registration of the same period and process since: DONE is open, and
// the unique index process_instances_one_open allows one open instance
// (on PostgreSQL the violation would abort the caller's transaction), so
// the instance then stays COMPLETED (reopened false) while its order and
// memberships are unpaid again; paying the order still completes them.
func ReopenInstance(ctx context.Context, db bun.IDB, instanceID int64, now time.Time) (reopened bool, err error) {
	inst := new(engine.ProcessInstance)
	if err := db.NewSelect().Model(inst).Column("id", "status", "user_key", "related_entity_type", "related_entity_id", "definition_key").
		Where("id = ?", instanceID).Scan(ctx); err != nil {
		return false, engine.NotFoundOr(err, "registration")
	}
	if inst.Status != engine.StateCompleted {
		return false, nil
	}
	other, err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).
		Where("user_key = ? AND related_entity_type = ? AND related_entity_id = ? AND definition_key = ? AND id <> ?",
			inst.UserKey, inst.RelatedEntityType, inst.RelatedEntityID, inst.DefinitionKey, inst.ID).
		Where(OpenCondition("status")).Exists(ctx)
	if err != nil {
		return false, fmt.Errorf("look for another open registration: %w", err)
	}
	if other {
		return false, nil
	}
	if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", engine.StateDone).Set("end_time = NULL").
		Set("version = version + 1").Set("updated_at = ?", now).
		Where("id = ? AND status = ?", instanceID, engine.StateCompleted).Exec(ctx); err != nil {
		return false, fmt.Errorf("reopen process instance: %w", err)
	}
	return true, nil
}

// MarkMoved records on inst the write that moves it to its next version at
// now (bumpVersion, moveInstance).
func MarkMoved(ctx context.Context, inst *engine.ProcessInstance, now time.Time) {
	inst.Version++
	inst.UpdatedAt = now
	if l := engine.LanguageOf(ctx); l != "" {
		inst.Language = l
	}
}

// ErrMovedMeanwhile is the version conflict of moveInstance and bumpVersion.
var ErrMovedMeanwhile = engine.Errorf(engine.CodeConflict, "this registration changed in another window; reload it to continue")

// ParseProcessID reads a process id; anything malformed is simply not found.
func ParseProcessID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, engine.Errorf(engine.CodeNotFound, "process instance not found")
	}
	return id, nil
}
