package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

func nowUTC() time.Time { return time.Now().UTC() }

// startPayment opens a new payment attempt for an unpaid order and returns its address.
func (s *Service) startPayment(ctx context.Context, db bun.IDB, order *Order) (string, error) {
	ref := NewReference("PR-")
	url, err := s.payments.CreatePayment(ctx, PaymentRequest{
		Reference: ref, AmountMinor: order.TotalMinor, Currency: order.Currency,
		Description: fmt.Sprintf("Membership registration, order %d", order.ID),
	})
	if err != nil {
		return "", fmt.Errorf("payment provider: %w", err)
	}
	now := s.clock()
	p := &Payment{OrderID: order.ID, Provider: s.payments.Name(), Reference: ref, AmountMinor: order.TotalMinor,
		Currency: order.Currency, Status: PaymentPending, PaymentURL: url, CreatedAt: now, UpdatedAt: now}
	// ON CONFLICT rather than catching the violation: on PostgreSQL an error
	// would abort the caller's transaction.
	res, err := db.NewInsert().Model(p).On("CONFLICT (order_id) WHERE status = 'PENDING' DO NOTHING").Exec(ctx)
	if err != nil {
		return "", fmt.Errorf("store payment attempt: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		// Another request opened an attempt for this order meanwhile: use that one.
		var open Payment
		if err := db.NewSelect().Model(&open).Where("order_id = ? AND status = ?", order.ID, PaymentPending).Scan(ctx); err != nil {
			return "", fmt.Errorf("load the open payment attempt: %w", err)
		}
		return open.PaymentURL, nil
	}
	return url, nil
}

// paymentURLFor returns the link of the instance's open payment attempt,
// starting a new attempt when the last one failed, was cancelled or never
// got made. An empty link with no error means the provider is unavailable.
func (s *Service) paymentURLFor(ctx context.Context, db bun.IDB, instanceID int64) (string, error) {
	order, err := liveOrder(ctx, db, instanceID)
	if err != nil {
		return "", err
	}
	if order.Status != OrderUnpaid {
		return "", nil
	}
	var last []Payment
	if err := db.NewSelect().Model(&last).Where("order_id = ?", order.ID).Order("id DESC").Limit(1).Scan(ctx); err != nil {
		return "", fmt.Errorf("load payment attempts: %w", err)
	}
	if len(last) == 1 && last[0].Status == PaymentPending {
		return last[0].PaymentURL, nil
	}
	url, err := s.startPayment(ctx, db, order)
	if err != nil {
		s.log.WarnContext(ctx, "payment link could not be created", "order", order.ID, "err", err)
		return "", nil
	}
	return url, nil
}

// RetryPayment starts a new payment attempt for a committed registration
// (after a failed or cancelled payment) and returns the form with its link.
func (s *Service) RetryPayment(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer classifyUnavailable(&err)
	inst, err := loadInstance(ctx, s.db, userKey, processID)
	if err != nil {
		return nil, err
	}
	if inst.Status != StateDone {
		return nil, Errorf(CodeConflict, "this registration is not waiting for payment")
	}
	return s.formFor(ctx, s.db, inst, nil)
}

// PaymentResult is what a payment return did.
type PaymentResult struct {
	Outcome    PaymentOutcome
	Replayed   bool // the attempt was already settled: nothing changed
	Stale      bool // the order was cancelled (reset) before this return: nothing changed
	Reference  string
	ProcessID  int64
	PeriodID   int64
	UserKey    string
	Order      *Order
	PaymentURL string
}

// PaymentView is what the payment page of the test gateway shows.
type PaymentView struct {
	Payment Payment
	Order   *Order
}

// PaymentForPage loads a payment attempt and its order by reference.
func (s *Service) PaymentForPage(ctx context.Context, reference string) (_ *PaymentView, err error) {
	defer classifyUnavailable(&err)
	p := new(Payment)
	if err := s.db.NewSelect().Model(p).Where("reference = ?", reference).Scan(ctx); err != nil {
		return nil, notFoundOr(err, "payment")
	}
	order := new(Order)
	err = s.db.NewSelect().Model(order).Where("?TableAlias.id = ?", p.OrderID).
		Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") }).Scan(ctx)
	if err != nil {
		return nil, notFoundOr(err, "order")
	}
	return &PaymentView{Payment: *p, Order: order}, nil
}

// CompletePayment applies a payment return. The query's status is never
// trusted: the provider verifies it first. Settling is idempotent: an
// attempt settles once, and a replayed or late return changes nothing.
//
// success: the order is paid, the memberships active, the instance
// COMPLETED and one confirmation is put in the outbox, in one transaction.
// failed and cancelled: the attempt is closed and the registration stays
// DONE, so the member can retry with a new attempt.
func (s *Service) CompletePayment(ctx context.Context, ret PaymentReturn) (_ *PaymentResult, err error) {
	defer classifyUnavailable(&err)
	outcome, err := s.payments.VerifyReturn(ctx, ret)
	if err != nil {
		if errors.Is(err, ErrForgedReturn) {
			return nil, Errorf(CodeInvalid, "this payment confirmation could not be verified")
		}
		return nil, &Error{Code: CodeUnavailable, Message: "the payment provider could not be reached; try again shortly", Err: err}
	}
	res := &PaymentResult{Outcome: outcome, Reference: ret.Reference}
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		p, order, err := lockPayment(ctx, tx, ret.Reference)
		if err != nil {
			return err
		}
		res.Order, res.ProcessID, res.PeriodID, res.UserKey = order, order.ProcessInstanceID, order.PeriodID, order.UserKey
		now := s.clock()
		if p.Status != PaymentPending {
			if outcome != OutcomeSuccess || p.Status == PaymentSucceeded {
				res.Replayed, res.Outcome = true, settledOutcome(p.Status)
				return nil
			}
			// The provider took the money for an attempt we had closed (the
			// member cancelled, or a reset cancelled it): it counts.
		}
		status := map[PaymentOutcome]PaymentStatus{OutcomeSuccess: PaymentSucceeded, OutcomeFailed: PaymentFailed, OutcomeCancelled: PaymentCancelled}[outcome]
		if err := settlePayment(ctx, tx, p, status, ret.TransactionID, now); err != nil {
			return err
		}
		if outcome != OutcomeSuccess {
			return nil
		}
		if order.Status != OrderUnpaid {
			// Cancelled by a reset, or paid by another attempt already.
			res.Stale = true
			s.log.ErrorContext(ctx, "payment succeeded for an order that is not waiting for payment; refund needed",
				"order", order.ID, "order_status", order.Status, "reference", p.Reference)
			return nil
		}
		return s.activate(ctx, tx, order, now)
	})
	if err != nil {
		return nil, err
	}
	if !res.Replayed && !res.Stale && outcome != OutcomeSuccess {
		res.Order.Status = OrderUnpaid
	}
	return res, nil
}

func settledOutcome(status PaymentStatus) PaymentOutcome {
	switch status {
	case PaymentSucceeded:
		return OutcomeSuccess
	case PaymentFailed:
		return OutcomeFailed
	}
	return OutcomeCancelled
}

// lockPayment loads a payment attempt and its order, after locking their
// process instance. Reset takes the instance first too, so a payment return
// and a reset of the same registration queue up instead of deadlocking, and
// what is read here is what the other committed. (SQLite runs one
// transaction at a time: it needs no lock.)
func lockPayment(ctx context.Context, tx bun.Tx, reference string) (*Payment, *Order, error) {
	var instanceID int64
	err := tx.NewSelect().Model((*Order)(nil)).Column("process_instance_id").
		Where("id = (?)", tx.NewSelect().Model((*Payment)(nil)).Column("order_id").Where("reference = ?", reference)).
		Scan(ctx, &instanceID)
	if err != nil {
		return nil, nil, notFoundOr(err, "payment")
	}
	if tx.Dialect().Name() == dialect.PG {
		if _, err := tx.NewSelect().Model((*ProcessInstance)(nil)).Column("id").Where("id = ?", instanceID).
			For("UPDATE").Exec(ctx); err != nil {
			return nil, nil, fmt.Errorf("lock process instance: %w", err)
		}
	}
	p := new(Payment)
	if err := tx.NewSelect().Model(p).Where("reference = ?", reference).Scan(ctx); err != nil {
		return nil, nil, notFoundOr(err, "payment")
	}
	order := new(Order)
	if err := tx.NewSelect().Model(order).Where("?TableAlias.id = ?", p.OrderID).
		Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") }).Scan(ctx); err != nil {
		return nil, nil, notFoundOr(err, "order")
	}
	return p, order, nil
}

// settlePayment records a payment attempt's outcome.
func settlePayment(ctx context.Context, tx bun.Tx, p *Payment, status PaymentStatus, transactionID string, now time.Time) error {
	q := tx.NewUpdate().Model((*Payment)(nil)).Set("status = ?", status).Set("updated_at = ?", now).
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

// activate marks a paid order's registration complete and queues the confirmation.
func (s *Service) activate(ctx context.Context, tx bun.Tx, order *Order, now time.Time) error {
	r, err := tx.NewUpdate().Model((*Order)(nil)).Set("status = ?", OrderPaid).Set("paid_at = ?", now).
		Where("id = ? AND status = ?", order.ID, OrderUnpaid).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark order paid: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("mark order %d paid: %d rows changed", order.ID, n)
	}
	order.Status, order.PaidAt = OrderPaid, &now
	if _, err := tx.NewUpdate().Model((*Membership)(nil)).Set("status = ?", MembershipActive).Set("activated_at = ?", now).
		Where("process_instance_id = ? AND status = ?", order.ProcessInstanceID, MembershipPending).Exec(ctx); err != nil {
		return fmt.Errorf("activate memberships: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*ProcessInstance)(nil)).Set("status = ?", StateCompleted).Set("end_time = ?", now).
		Set("version = version + 1").Set("updated_at = ?", now).
		Where("id = ? AND status = ?", order.ProcessInstanceID, StateDone).Exec(ctx); err != nil {
		return fmt.Errorf("complete process instance: %w", err)
	}
	var persons []Person
	if err := tx.NewSelect().Model(&persons).
		Where("id IN (?)", tx.NewSelect().Model((*Membership)(nil)).Column("person_id").
			Where("process_instance_id = ? AND status = ?", order.ProcessInstanceID, MembershipActive)).
		Order("id ASC").Scan(ctx); err != nil {
		return fmt.Errorf("load persons to confirm: %w", err)
	}
	names := make([]string, len(persons))
	recipient := ""
	for i, p := range persons {
		names[i] = p.FirstName + " " + p.LastName
		if recipient == "" && p.Email != "" {
			recipient = p.Email
		}
	}
	payload, err := json.Marshal(map[string]any{
		"orderId": order.ID, "userKey": order.UserKey, "periodId": order.PeriodID,
		"persons": names, "total": FormatMoney(order.TotalMinor, order.Currency),
	})
	if err != nil {
		return fmt.Errorf("confirmation payload: %w", err)
	}
	msg := &OutboxMessage{Kind: "membership_confirmation", DedupKey: fmt.Sprintf("membership_confirmation:order:%d", order.ID),
		Recipient: recipient, Payload: string(payload), CreatedAt: now}
	if _, err := tx.NewInsert().Model(msg).On("CONFLICT (dedup_key) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("queue confirmation: %w", err)
	}
	return nil
}
