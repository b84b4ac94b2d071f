package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/jobs"
)

// The writes of a batched settlement (engine/payment/settle_batch.go):
// each the change its single-row counterpart (MarkOrderPaid,
// ActivatePendingMemberships, CompleteInstance, ActiveMembersOf,
// QueueMessage, LockInstance) makes, for a set of rows with one statement
// per kind, so that settling a batch of payments costs a few round trips
// rather than some twenty per payment (issue 42).

// LockInstances takes the row locks of instances on PostgreSQL, in id
// order (two batches lock their common instances in the same order and
// queue up instead of deadlocking). SQLite runs one transaction at a time:
// it needs no lock.
func LockInstances(ctx context.Context, tx bun.Tx, ids []int64) error {
	if tx.Dialect().Name() != dialect.PG || len(ids) == 0 {
		return nil
	}
	if _, err := tx.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("id").Where("id IN (?)", bun.List(ids)).
		Order("id").For("UPDATE").Exec(ctx); err != nil {
		return fmt.Errorf("lock process instances: %w", err)
	}
	return nil
}

// MarkOrdersPaid marks unpaid orders paid. Anything but every one changed
// is a defect: the caller holds their instances' locks.
func MarkOrdersPaid(ctx context.Context, db bun.IDB, ids []int64, now time.Time) error {
	r, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Set("paid_at = ?", now).
		Where("id IN (?) AND status = ?", bun.List(ids), engine.OrderUnpaid).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark orders paid: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != int64(len(ids)) {
		return fmt.Errorf("mark %d orders paid: %d rows changed", len(ids), n)
	}
	return nil
}

// ActivatePendingMembershipsOf activates the memberships of instances that
// wait for payment and returns them as they are now, by instance, each
// instance's by person.
func ActivatePendingMembershipsOf(ctx context.Context, db bun.IDB, instanceIDs []int64, now time.Time) (map[int64][]engine.Membership, error) {
	var pending []engine.Membership
	if err := db.NewSelect().Model(&pending).Where("process_instance_id IN (?) AND status = ?", bun.List(instanceIDs), engine.MembershipPending).
		Order("process_instance_id", "person_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load pending memberships: %w", err)
	}
	if len(pending) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(pending))
	out := make(map[int64][]engine.Membership)
	for i := range pending {
		ids[i] = pending[i].ID
		pending[i].Status, pending[i].ActivatedAt = engine.MembershipActive, &now
		out[*pending[i].ProcessInstanceID] = append(out[*pending[i].ProcessInstanceID], pending[i])
	}
	if _, err := db.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipActive).Set("activated_at = ?", now).
		Where("id IN (?) AND status = ?", bun.List(ids), engine.MembershipPending).Exec(ctx); err != nil {
		return nil, fmt.Errorf("activate memberships: %w", err)
	}
	return out, nil
}

// CompleteInstances moves committed (DONE) instances to COMPLETED.
func CompleteInstances(ctx context.Context, db bun.IDB, ids []int64, now time.Time) error {
	if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", engine.StateCompleted).Set("end_time = ?", now).
		Set("version = version + 1").Set("updated_at = ?", now).
		Where("id IN (?) AND status = ?", bun.List(ids), engine.StateDone).Exec(ctx); err != nil {
		return fmt.Errorf("complete process instances: %w", err)
	}
	return nil
}

// ActiveMembersOfEach is ActiveMembersOf for several instances: the persons
// whose membership from each is active, by id.
func ActiveMembersOfEach(ctx context.Context, db bun.IDB, instanceIDs []int64) (map[int64][]engine.Person, error) {
	var links []engine.Membership
	if err := db.NewSelect().Model(&links).Column("person_id", "process_instance_id").
		Where("process_instance_id IN (?) AND status = ?", bun.List(instanceIDs), engine.MembershipActive).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons to confirm: %w", err)
	}
	if len(links) == 0 {
		return nil, nil
	}
	personIDs := make([]int64, 0, len(links))
	for _, l := range links {
		personIDs = append(personIDs, l.PersonID)
	}
	var persons []engine.Person
	if err := db.NewSelect().Model(&persons).Where("id IN (?)", bun.List(personIDs)).Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons to confirm: %w", err)
	}
	byID := make(map[int64]*engine.Person, len(persons))
	for i := range persons {
		byID[persons[i].ID] = &persons[i]
	}
	members := make(map[int64][]int64)
	for _, l := range links {
		if !slices.Contains(members[*l.ProcessInstanceID], l.PersonID) {
			members[*l.ProcessInstanceID] = append(members[*l.ProcessInstanceID], l.PersonID)
		}
	}
	out := make(map[int64][]engine.Person, len(members))
	for instance, ids := range members {
		slices.Sort(ids)
		for _, id := range ids {
			if p, ok := byID[id]; ok {
				out[instance] = append(out[instance], *p)
			}
		}
	}
	return out, nil
}

// QueueMessages puts messages in the outbox as QueueMessage puts each (once
// by dedup key, with the job that delivers it), with one statement for the
// messages and one for their jobs.
func QueueMessages(ctx context.Context, db bun.IDB, msgs []*engine.OutboxMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	if _, err := db.NewInsert().Model(&msgs).On("CONFLICT (dedup_key) DO NOTHING").Returning("NULL").Exec(ctx); err != nil {
		return fmt.Errorf("queue %s: %w", msgs[0].Kind, err)
	}
	specs := make([]jobs.Spec, 0, len(msgs))
	for _, msg := range msgs {
		specs = append(specs, jobs.Spec{Kind: string(msg.Kind), DedupKey: OutboxJobKey(msg.DedupKey), Payload: engine.OutboxJob{Message: msg.DedupKey}})
	}
	// The jobs' time is the first message's, as each message's job has
	// its message's: a batch's messages are queued at one moment.
	if err := jobs.EnqueueAll(ctx, db, msgs[0].CreatedAt, specs); err != nil {
		return fmt.Errorf("queue %s: %w", msgs[0].Kind, err)
	}
	return nil
}
