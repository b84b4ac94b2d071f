package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Store functions for payment attempts (payments): at most one pending
// attempt per order, each settled once.

// insertPendingPayment stores a new pending attempt unless the order has
// one already; inserted says which. ON CONFLICT rather than catching the
// violation: on PostgreSQL an error would abort the caller's transaction.
func insertPendingPayment(ctx context.Context, db bun.IDB, p *engine.Payment) (inserted bool, err error) {
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
func pendingPayment(ctx context.Context, db bun.IDB, orderID int64) (*engine.Payment, error) {
	p := new(engine.Payment)
	if err := db.NewSelect().Model(p).Where("order_id = ? AND status = ?", orderID, engine.PaymentPending).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load the open payment attempt: %w", err)
	}
	return p, nil
}

// lastPayment loads the newest attempt of an order, or nil when it has none.
func lastPayment(ctx context.Context, db bun.IDB, orderID int64) (*engine.Payment, error) {
	var last []engine.Payment
	if err := db.NewSelect().Model(&last).Where("order_id = ?", orderID).Order("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payment attempts: %w", err)
	}
	if len(last) == 0 {
		return nil, nil //nolint:nilnil // "no attempt yet" is a normal answer, not an error
	}
	return &last[0], nil
}

// paymentByReference loads an attempt by its reference.
func paymentByReference(ctx context.Context, db bun.IDB, reference string) (*engine.Payment, error) {
	p := new(engine.Payment)
	if err := db.NewSelect().Model(p).Where("reference = ?", reference).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "payment")
	}
	return p, nil
}

// instanceOfPayment returns the process instance whose order an attempt pays.
func instanceOfPayment(ctx context.Context, db bun.IDB, reference string) (int64, error) {
	var instanceID int64
	err := db.NewSelect().Model((*engine.Order)(nil)).Column("process_instance_id").
		Where("id = (?)", db.NewSelect().Model((*engine.Payment)(nil)).Column("order_id").Where("reference = ?", reference)).
		Scan(ctx, &instanceID)
	if err != nil {
		return 0, engine.NotFoundOr(err, "payment")
	}
	return instanceID, nil
}

// SettlePayment records a payment attempt's outcome, with what the
// provider said was paid. It changes the row only from the status the
// caller read (under the instance lock), so settling stays monotonic.
func SettlePayment(ctx context.Context, db bun.IDB, p *engine.Payment, status engine.PaymentStatus, c engine.PaymentConfirmation, now time.Time) error {
	q := db.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", status).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", p.ID, p.Status)
	if c.TransactionID != "" {
		q = q.Set("transaction_id = ?", c.TransactionID)
	}
	if c.Outcome == engine.OutcomeSuccess {
		q = q.Set("paid_amount_minor = ?", c.AmountMinor).Set("paid_currency = ?", c.Currency)
	}
	r, err := q.Exec(ctx)
	if err != nil {
		if store.IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "this payment transaction was already used")
		}
		return fmt.Errorf("settle payment: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		// Under the instance lock nobody else can settle it; this is a bug.
		return fmt.Errorf("settle payment %d: %d rows changed", p.ID, n)
	}
	p.Status = status
	return nil
}

// UpdatePayment writes the named columns of an attempt.
func UpdatePayment(ctx context.Context, db bun.IDB, p *engine.Payment, columns ...string) error {
	if _, err := db.NewUpdate().Model(p).Column(columns...).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("update payment attempt: %w", err)
	}
	return nil
}

// RecordPaymentEvent stores a confirmation. A provider event id is stored
// once: inserted is false when the event was seen before (a redelivery),
// and then nothing else may change. ON CONFLICT rather than catching the
// violation, which would abort the caller's transaction on PostgreSQL.
func RecordPaymentEvent(ctx context.Context, db bun.IDB, ev *engine.PaymentEvent) (inserted bool, err error) {
	res, err := db.NewInsert().Model(ev).On("CONFLICT (provider, event_id) WHERE event_id IS NOT NULL DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("store payment event: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store payment event: %w", err)
	}
	return n == 1, nil
}

// pendingPaymentsBefore lists up to limit pending attempts created before
// cutoff, oldest first: the ones a missed webhook may have left open.
func pendingPaymentsBefore(ctx context.Context, db bun.IDB, cutoff time.Time, orderID int64, limit int) ([]engine.Payment, error) {
	var ps []engine.Payment
	q := engine.ScopeOrg(ctx, db.NewSelect().Model(&ps), paymentOrg).Where("status = ? AND created_at < ?", engine.PaymentPending, cutoff).Order("id ASC").Limit(int64(limit))
	if orderID != 0 {
		q = q.Where("order_id = ?", orderID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load pending payment attempts: %w", err)
	}
	return ps, nil
}

// refundsDue lists up to limit attempts whose money is to be given back.
func refundsDue(ctx context.Context, db bun.IDB, orderID int64, limit int) ([]engine.Payment, error) {
	var ps []engine.Payment
	q := engine.ScopeOrg(ctx, db.NewSelect().Model(&ps), paymentOrg).Where("refund_status = ? AND NOT refund_manual", engine.RefundDue).Order("id ASC").Limit(int64(limit))
	if orderID != 0 {
		q = q.Where("order_id = ?", orderID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load refunds due: %w", err)
	}
	return ps, nil
}

// markRefunded records a refund made, once.
func markRefunded(ctx context.Context, db bun.IDB, paymentID int64, refundID string, now time.Time) error {
	if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("refund_status = ?", engine.RefundDone).Set("refund_id = ?", refundID).
		Set("updated_at = ?", now).Where("id = ? AND refund_status = ?", paymentID, engine.RefundDue).Exec(ctx); err != nil {
		return fmt.Errorf("record refund: %w", err)
	}
	return nil
}

// unpaidOrdersWithoutAttempt lists up to limit unpaid orders of committed
// registrations that never got a payment attempt (the provider was down at
// commit), oldest first; orderID narrows it to one order.
func unpaidOrdersWithoutAttempt(ctx context.Context, db bun.IDB, orderID int64, limit int) ([]engine.Order, error) {
	var orders []engine.Order
	q := store.WithLines(db.NewSelect().Model(&orders)).Where("?TableAlias.status = ?", engine.OrderUnpaid).
		Where("NOT EXISTS (SELECT 1 FROM payments AS p WHERE p.order_id = ?)", bun.Ident("order.id")).
		OrderExpr("?TableAlias.id ASC").Limit(int64(limit))
	if orderID != 0 {
		q = q.Where("?TableAlias.id = ?", orderID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load orders without payment attempt: %w", err)
	}
	return orders, nil
}

// orderByPayReference loads an order by its stable payment reference, with its lines.
func orderByPayReference(ctx context.Context, db bun.IDB, reference string) (*engine.Order, error) {
	order := new(engine.Order)
	if err := store.WithLines(db.NewSelect().Model(order).Where("?TableAlias.pay_reference = ?", reference)).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "order")
	}
	return order, nil
}

// PendingPaymentsOfInstance lists the pending attempts of an instance's unpaid order.
func PendingPaymentsOfInstance(ctx context.Context, db bun.IDB, instanceID int64) ([]engine.Payment, error) {
	var ps []engine.Payment
	orderIDs := db.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("process_instance_id = ? AND status = ?", instanceID, engine.OrderUnpaid)
	if err := db.NewSelect().Model(&ps).Where("order_id IN (?) AND status = ?", orderIDs, engine.PaymentPending).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load pending payment attempts: %w", err)
	}
	return ps, nil
}

// cancelPayment closes a pending attempt; false when it was no longer pending.
func cancelPayment(ctx context.Context, db bun.IDB, paymentID int64, now time.Time) (bool, error) {
	r, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", engine.PaymentCancelled).Set("updated_at = ?", now).
		Where("id = ? AND status = ?", paymentID, engine.PaymentPending).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("cancel payment attempt: %w", err)
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// CancelPendingPayments cancels the pending attempts of an instance's unpaid order.
func CancelPendingPayments(ctx context.Context, db bun.IDB, instanceID int64, now time.Time) error {
	orderIDs := db.NewSelect().Model((*engine.Order)(nil)).Column("id").Where("process_instance_id = ? AND status = ?", instanceID, engine.OrderUnpaid)
	// Money already received in part (partial bank-transfer captures) does
	// not vanish with its cancelled attempt: it is owed back by hand and
	// listed for staff until they mark it paid back.
	partlyPaid := db.NewSelect().Model((*engine.PaymentEvent)(nil)).Column("reference").
		Where("event_type = ? AND outcome = ?", BankCaptureEvent, PartialCaptureOutcome)
	if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("refund_status = ?", engine.RefundDue).Set("refund_manual = ?", true).
		Where("order_id IN (?) AND status = ? AND reference IN (?) AND refund_status <> ?", orderIDs, engine.PaymentPending, partlyPaid, engine.RefundDone).
		Exec(ctx); err != nil {
		return fmt.Errorf("owe partial payments back: %w", err)
	}
	if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", engine.PaymentCancelled).Set("updated_at = ?", now).
		Where("order_id IN (?) AND status = ?", orderIDs, engine.PaymentPending).Exec(ctx); err != nil {
		return fmt.Errorf("cancel payments: %w", err)
	}
	return nil
}

// unpaidOrderOf loads the unpaid order of userKey's registration for a
// period, or nil when there is none.
func unpaidOrderOf(ctx context.Context, db bun.IDB, userKey string, periodID int64) (*engine.Order, error) {
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Where("user_key = ? AND period_id = ? AND status = ?", userKey, periodID, engine.OrderUnpaid).
		Order("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load unpaid order: %w", err)
	}
	if len(orders) == 0 {
		return nil, nil //nolint:nilnil // no unpaid order is a normal answer
	}
	return &orders[0], nil
}

// paymentOrg is a payment attempt's organisation, its order's, for scopeOrg.
const paymentOrg = "(SELECT o.organisation_id FROM orders AS o WHERE o.id = payment.order_id)"
