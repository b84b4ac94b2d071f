package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Store functions for payment attempts (payments): at most one pending
// attempt per order, each settled once.

// insertPendingPayment stores a new pending attempt unless the order has
// one already; inserted says which. ON CONFLICT rather than catching the
// violation: on PostgreSQL an error would abort the caller's transaction.
func insertPendingPayment(ctx context.Context, db bun.IDB, p *Payment) (inserted bool, err error) {
	res, err := db.NewInsert().Model(p).On("CONFLICT (order_id) WHERE status = 'PENDING' DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("store payment attempt: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return false, nil
	}
	return true, nil
}

// pendingPayment loads the pending attempt of an order.
func pendingPayment(ctx context.Context, db bun.IDB, orderID int64) (*Payment, error) {
	p := new(Payment)
	if err := db.NewSelect().Model(p).Where("order_id = ? AND status = ?", orderID, PaymentPending).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load the open payment attempt: %w", err)
	}
	return p, nil
}

// lastPayment loads the newest attempt of an order, or nil when it has none.
func lastPayment(ctx context.Context, db bun.IDB, orderID int64) (*Payment, error) {
	var last []Payment
	if err := db.NewSelect().Model(&last).Where("order_id = ?", orderID).Order("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payment attempts: %w", err)
	}
	if len(last) == 0 {
		return nil, nil //nolint:nilnil // "no attempt yet" is a normal answer, not an error
	}
	return &last[0], nil
}

// paymentByReference loads an attempt by its reference.
func paymentByReference(ctx context.Context, db bun.IDB, reference string) (*Payment, error) {
	p := new(Payment)
	if err := db.NewSelect().Model(p).Where("reference = ?", reference).Scan(ctx); err != nil {
		return nil, notFoundOr(err, "payment")
	}
	return p, nil
}

// instanceOfPayment returns the process instance whose order an attempt pays.
func instanceOfPayment(ctx context.Context, db bun.IDB, reference string) (int64, error) {
	var instanceID int64
	err := db.NewSelect().Model((*Order)(nil)).Column("process_instance_id").
		Where("id = (?)", db.NewSelect().Model((*Payment)(nil)).Column("order_id").Where("reference = ?", reference)).
		Scan(ctx, &instanceID)
	if err != nil {
		return 0, notFoundOr(err, "payment")
	}
	return instanceID, nil
}

// settlePayment records a payment attempt's outcome.
func settlePayment(ctx context.Context, db bun.IDB, p *Payment, status PaymentStatus, transactionID string, now time.Time) error {
	q := db.NewUpdate().Model((*Payment)(nil)).Set("status = ?", status).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", p.ID, p.Status)
	if transactionID != "" {
		q = q.Set("transaction_id = ?", transactionID)
	}
	r, err := q.Exec(ctx)
	if err != nil {
		if isUniqueViolation(err) {
			return Errorf(CodeConflict, "this payment transaction was already used")
		}
		return fmt.Errorf("settle payment: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		// Under the instance lock nobody else can settle it; this is a bug.
		return fmt.Errorf("settle payment %d: %d rows changed", p.ID, n)
	}
	return nil
}

// cancelPendingPayments cancels the pending attempts of an instance's unpaid order.
func cancelPendingPayments(ctx context.Context, db bun.IDB, instanceID int64, now time.Time) error {
	orderIDs := db.NewSelect().Model((*Order)(nil)).Column("id").Where("process_instance_id = ? AND status = ?", instanceID, OrderUnpaid)
	if _, err := db.NewUpdate().Model((*Payment)(nil)).Set("status = ?", PaymentCancelled).Set("updated_at = ?", now).
		Where("order_id IN (?) AND status = ?", orderIDs, PaymentPending).Exec(ctx); err != nil {
		return fmt.Errorf("cancel payments: %w", err)
	}
	return nil
}
