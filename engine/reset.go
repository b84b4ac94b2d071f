package engine

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Reset deletes every answer of an instance and returns it to person
// selection in state INIT. A committed but unpaid registration is undone:
// its memberships and order are cancelled (kept for the record, never
// deleted) and pending payment attempts are cancelled. A completed
// registration cannot be reset.
func (s *Service) Reset(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	var form *Form
	var open []Payment
	var orgID int64
	err = inTx(ctx, s.db, s.auditedTx(func(ctx context.Context, tx bun.Tx) error { // audit.go: a staff reset's entry, if any
		open = nil
		inst, err := loadUnfinished(ctx, tx, userKey, processID, " and cannot be reset")
		if err != nil {
			return err
		}
		orgID = inst.OrganisationID
		def, err := s.defs.get(ctx, tx, inst.DefinitionID)
		if err != nil {
			return err
		}
		if inst.Status == StateInit && inst.CurrentStepID == nil && len(inst.SelectedPersons) == 0 {
			// At its start already: a second post of the staff form, or a
			// second click. Nothing is written, nor audited twice.
			auditUnchanged(ctx)
			form, err = s.selectionForm(ctx, tx, inst, def, nil)
			return err
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
			if open, err = pendingPaymentsOfInstance(ctx, tx, inst.ID); err != nil {
				return err
			}
			if err := cancelCommit(ctx, tx, inst.ID, now); err != nil {
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
		if err := s.providerOf(orgID, &p).Expire(ctx, p); err != nil {
			s.log.WarnContext(ctx, "a cancelled checkout could not be closed at the provider", "reference", p.Reference, "err", err)
		}
	}
	return form, nil
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
