package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Store functions for memberships (memberships): a person's membership of
// a period, pending until its order is paid.

// MembershipStatuses returns the person status of each person for a period.
func MembershipStatuses(ctx context.Context, db bun.IDB, periodID int64, personIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(personIDs))
	for _, id := range personIDs {
		out[id] = engine.PersonAvailable
	}
	if len(personIDs) == 0 {
		return out, nil
	}
	var ms []engine.Membership
	err := db.NewSelect().Model(&ms).Column("person_id", "status").
		Where("period_id = ? AND person_id IN (?) AND status IN (?)", periodID, bun.List(personIDs),
			bun.List([]engine.MembershipStatus{engine.MembershipPending, engine.MembershipActive})).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load membership statuses: %w", err)
	}
	for _, m := range ms {
		if m.Status == engine.MembershipActive {
			out[m.PersonID] = engine.PersonRegistered
		} else {
			out[m.PersonID] = engine.PersonPendingPayment
		}
	}
	return out, nil
}

// PreviousMembershipTypes returns the membership types each person held
// (active) in the previous period: the organisation's latest one that ended
// before start.
func PreviousMembershipTypes(ctx context.Context, db bun.IDB, orgID int64, start time.Time, personIDs []int64) (map[int64][]int64, error) {
	var held []engine.Membership
	err := db.NewSelect().Model(&held).Column("person_id", "membership_type_id").
		Where("person_id IN (?) AND status = ?", bun.List(personIDs), engine.MembershipActive).
		Where("period_id = (?)", db.NewSelect().Model((*engine.MembershipPeriod)(nil)).Column("id").
			Where("organisation_id = ? AND end_date < ?", orgID, start).
			Order("end_date DESC").Limit(1)).
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load previous memberships: %w", err)
	}
	previous := map[int64][]int64{}
	for _, m := range held {
		previous[m.PersonID] = append(previous[m.PersonID], m.MembershipTypeID)
	}
	return previous, nil
}

// InsertMemberships stores new memberships. A unique violation means a
// person already has a live membership of the period: a conflict.
func InsertMemberships(ctx context.Context, db bun.IDB, memberships []engine.Membership) error {
	if _, err := db.NewInsert().Model(&memberships).Exec(ctx); err != nil {
		if IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "a selected person was registered for this period in the meantime; start again to choose persons")
		}
		return fmt.Errorf("create memberships: %w", err)
	}
	return nil
}

// CancelPendingMemberships cancels the memberships of an instance that wait for payment.
func CancelPendingMemberships(ctx context.Context, db bun.IDB, instanceID int64) error {
	if _, err := db.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipCancelled).
		Where("process_instance_id = ? AND status = ?", instanceID, engine.MembershipPending).Exec(ctx); err != nil {
		return fmt.Errorf("cancel memberships: %w", err)
	}
	return nil
}

// ActivatePendingMemberships activates the memberships of an instance that
// wait for payment and returns them as they are now.
func ActivatePendingMemberships(ctx context.Context, db bun.IDB, instanceID int64, now time.Time) ([]engine.Membership, error) {
	var pending []engine.Membership
	if err := db.NewSelect().Model(&pending).Where("process_instance_id = ? AND status = ?", instanceID, engine.MembershipPending).
		Order("person_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load pending memberships: %w", err)
	}
	if len(pending) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(pending))
	for i := range pending {
		ids[i] = pending[i].ID
		pending[i].Status, pending[i].ActivatedAt = engine.MembershipActive, &now
	}
	if _, err := db.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipActive).Set("activated_at = ?", now).
		Where("id IN (?) AND status = ?", bun.List(ids), engine.MembershipPending).Exec(ctx); err != nil {
		return nil, fmt.Errorf("activate memberships: %w", err)
	}
	return pending, nil
}

// SuspendActiveMemberships is activatePendingMemberships undone, for an
// order whose money went back (a returned direct debit): the instance's
// active memberships wait for payment again. It returns how many.
func SuspendActiveMemberships(ctx context.Context, db bun.IDB, instanceID int64) (int, error) {
	r, err := db.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipPending).Set("activated_at = NULL").
		Where("process_instance_id = ? AND status = ?", instanceID, engine.MembershipActive).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("suspend memberships: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("suspend memberships: %w", err)
	}
	return int(n), nil
}
