package registration

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// Reset deletes every answer of an instance and returns it to person
// selection in state INIT. A committed but unpaid registration is undone:
// its memberships and order are cancelled (kept for the record, never
// deleted) and pending payment attempts are cancelled. A completed
// registration cannot be reset.
func (s *Service) Reset(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	if !engine.InAudit(ctx) { // a member's own reset: prepared statements (resetOpen)
		if form, done, err := s.resetOpen(ctx, userKey, processID); done || err != nil {
			return form, err
		}
	}
	var form *Form
	var open []engine.Payment
	var orgID int64
	err = engine.InTx(ctx, s.DB(), s.AuditedTx(func(ctx context.Context, tx bun.Tx) error { // audit.go: a staff reset's entry, if any
		open = nil
		inst, err := loadUnfinished(ctx, tx, userKey, processID, " and cannot be reset")
		if err != nil {
			return err
		}
		orgID = inst.OrganisationID
		def, err := definition.Of(s.Service).Cache().Get(ctx, tx, inst.DefinitionID)
		if err != nil {
			return err
		}
		if atStart(inst) {
			// At its start already: a second post of the staff form, or a
			// second click. Nothing is written, nor audited twice.
			engine.AuditUnchanged(ctx)
			form, err = s.selectionForm(ctx, tx, inst, def, nil)
			return err
		}
		wasDone := inst.Status == engine.StateDone
		now := s.Clock()
		inst.Status, inst.CurrentStepID, inst.SelectedPersons = engine.StateInit, nil, []int64{}
		if err := store.BumpVersion(ctx, tx, inst, now, "status", "current_step_id", "selected_persons"); err != nil {
			return err
		}
		if err := store.DeleteInstanceData(ctx, tx, inst.ID); err != nil {
			return err
		}
		if wasDone {
			if open, err = payment.PendingPaymentsOfInstance(ctx, tx, inst.ID); err != nil {
				return err
			}
			if err := CancelCommit(ctx, tx, inst.ID, now); err != nil {
				return err
			}
		}
		form, err = s.selectionForm(ctx, tx, inst, def, nil)
		return err
	}))
	if err != nil {
		return nil, err
	}
	// Close the cancelled attempts' checkouts at the provider, after the
	// transaction: a payment that still lands is refunded (settle).
	for _, p := range open {
		if err := payment.Of(s.Service).ProviderOf(orgID, &p).Expire(ctx, p); err != nil {
			s.Log.WarnContext(ctx, "a cancelled checkout could not be closed at the provider", "reference", p.Reference, "err", err)
		}
	}
	return form, nil
}

// atStart reports whether inst is at person selection with nothing
// selected: a reset has nothing to write.
func atStart(inst *engine.ProcessInstance) bool {
	return inst.Status == engine.StateInit && inst.CurrentStepID == nil && len(inst.SelectedPersons) == 0
}

// resetStateSQL is the read of a reset: the registration with the persons
// of the selection form it returns to.
var resetStateSQL = newStateStatements(linkedPersonsColumn)

// resetQuery is a reset's write on PostgreSQL in one statement: the
// version-checked return to person selection (as bumpVersion) and every
// selection and answer deleted; a row if it moved. $1 status, $2 new
// version, $3 now, $4 instance, $5 version read, $6 the member's language
// ("" keeps the registration's).
const resetQuery = `WITH moved AS (
	UPDATE process_instances SET status = $1, current_step_id = NULL, selected_persons = '[]', version = $2, updated_at = $3,
	language = COALESCE(NULLIF($6, ''), language)
	WHERE id = $4 AND version = $5 RETURNING id
), cleared AS (
	DELETE FROM process_data WHERE instance_id IN (SELECT id FROM moved)
)
SELECT id FROM moved`

// sqliteReset is resetQuery on SQLite, two statements in one transaction.
var sqliteReset = [...]string{
	`UPDATE process_instances SET status = ?, current_step_id = NULL, selected_persons = '[]', version = ?, updated_at = ?,
	language = COALESCE(NULLIF(?, ''), language) WHERE id = ? AND version = ?`,
	`DELETE FROM process_data WHERE instance_id = ?`,
}

// resetOpen resets a registration that is not committed, in prepared
// statements: one read and one write (on SQLite two, in a transaction).
// done is false for one it leaves to Reset's transaction: committed (its
// commit is undone) or finished (refused there).
func (s *Service) resetOpen(ctx context.Context, userKey, processID string) (*Form, bool, error) {
	var personsJSON []byte
	inst, err := s.loadState(ctx, resetStateSQL, userKey, processID, &personsJSON)
	if err != nil {
		return nil, true, err
	}
	if inst.Status == engine.StateDone || engine.Finished(inst.Status) {
		return nil, false, nil
	}
	def, err := definition.Of(s.Service).Cache().Get(ctx, s.DB(), inst.DefinitionID)
	if err != nil {
		return nil, true, err
	}
	persons, statuses, err := decodeLinkedPersons(personsJSON)
	if err != nil {
		return nil, true, err
	}
	if !atStart(inst) { // at its start already: nothing to write
		if err := s.writeReset(ctx, inst, s.Clock()); err != nil {
			return nil, true, err
		}
	}
	return selectionFormOf(inst, def, persons, statuses), true, nil
}

// writeReset returns inst to person selection and deletes its selections
// and answers if its version is still the one read (moveInstance).
func (s *Service) writeReset(ctx context.Context, inst *engine.ProcessInstance, now time.Time) error {
	version, language := inst.Version, engine.LanguageOf(ctx)
	inst.Status, inst.CurrentStepID, inst.SelectedPersons = engine.StateInit, nil, []int64{}
	return s.moveInstance(ctx, s.DB(), inst, now,
		resetQuery, []any{string(engine.StateInit), version + 1, now, inst.ID, version, language},
		sqliteReset[:], [][]any{{string(engine.StateInit), version + 1, now, language, inst.ID, version}, {inst.ID}})
}

// CancelCommit cancels the pending memberships, the unpaid order and its pending payments of an instance.
// The payments go before the order: they are found through the unpaid order.
func CancelCommit(ctx context.Context, tx bun.Tx, instanceID int64, now time.Time) error {
	if err := store.CancelPendingMemberships(ctx, tx, instanceID); err != nil {
		return err
	}
	if err := payment.CancelPendingPayments(ctx, tx, instanceID, now); err != nil {
		return err
	}
	return store.CancelUnpaidOrders(ctx, tx, instanceID)
}
