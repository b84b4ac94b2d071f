package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
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
	if _, err := db.NewInsert().Model(p).Exec(ctx); err != nil {
		return "", fmt.Errorf("store payment attempt: %w", err)
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
func (s *Service) RetryPayment(ctx context.Context, userKey, processID string) (*Form, error) {
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
	Outcome    string // success, failed or cancelled
	Replayed   bool   // the attempt was already settled: nothing changed
	Stale      bool   // the order was cancelled (reset) before this return: nothing changed
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
func (s *Service) PaymentForPage(ctx context.Context, reference string) (*PaymentView, error) {
	p := new(Payment)
	if err := s.db.NewSelect().Model(p).Where("reference = ?", reference).Scan(ctx); err != nil {
		return nil, notFoundOr(err, "payment")
	}
	order := new(Order)
	err := s.db.NewSelect().Model(order).Where("?TableAlias.id = ?", p.OrderID).
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
func (s *Service) CompletePayment(ctx context.Context, ret PaymentReturn) (*PaymentResult, error) {
	outcome, err := s.payments.VerifyReturn(ctx, ret)
	if err != nil {
		if errors.Is(err, ErrForgedReturn) {
			return nil, Errorf(CodeInvalid, "this payment confirmation could not be verified")
		}
		return nil, &Error{Code: CodeUnavailable, Message: "the payment provider could not be reached; try again shortly", Err: err}
	}
	res := &PaymentResult{Outcome: outcome, Reference: ret.Reference}
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		p := new(Payment)
		if err := tx.NewSelect().Model(p).Where("reference = ?", ret.Reference).Scan(ctx); err != nil {
			return notFoundOr(err, "payment")
		}
		order := new(Order)
		if err := tx.NewSelect().Model(order).Where("?TableAlias.id = ?", p.OrderID).
			Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("line_no ASC") }).Scan(ctx); err != nil {
			return notFoundOr(err, "order")
		}
		res.Order, res.ProcessID, res.PeriodID, res.UserKey = order, order.ProcessInstanceID, order.PeriodID, order.UserKey
		if p.Status == PaymentCancelled && order.Status == OrderCancelled && outcome == OutcomeSuccess {
			// We cancelled this attempt when the registration was reset, but
			// the provider took the money anyway: record it for a refund.
			res.Stale = true
			if _, err := tx.NewUpdate().Model((*Payment)(nil)).Set("status = ?", PaymentSucceeded).
				Set("transaction_id = ?", nullable(ret.TransactionID)).Set("updated_at = ?", s.clock()).
				Where("id = ? AND status = ?", p.ID, PaymentCancelled).Exec(ctx); err != nil {
				return fmt.Errorf("record late payment: %w", err)
			}
			s.log.ErrorContext(ctx, "payment succeeded for an order that was cancelled; refund needed", "order", order.ID, "reference", p.Reference)
			return nil
		}
		if p.Status != PaymentPending {
			res.Replayed = true
			res.Outcome = settledOutcome(p.Status)
			return nil
		}
		if order.Status != OrderUnpaid {
			res.Stale = true
		}
		status := map[string]string{OutcomeSuccess: PaymentSucceeded, OutcomeFailed: PaymentFailed, OutcomeCancelled: PaymentCancelled}[outcome]
		now := s.clock()
		q := tx.NewUpdate().Model((*Payment)(nil)).Set("status = ?", status).Set("updated_at = ?", now).
			Where("id = ? AND status = ?", p.ID, PaymentPending)
		if ret.TransactionID != "" {
			q = q.Set("transaction_id = ?", ret.TransactionID)
		}
		r, err := q.Exec(ctx)
		if err != nil {
			if isUniqueViolation(err) {
				return Errorf(CodeConflict, "this payment transaction was already used")
			}
			return fmt.Errorf("settle payment: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			res.Replayed = true // a concurrent return settled it first
			return nil
		}
		if outcome != OutcomeSuccess || res.Stale {
			if res.Stale && outcome == OutcomeSuccess {
				s.log.ErrorContext(ctx, "payment succeeded for an order that was cancelled; refund needed", "order", order.ID, "reference", p.Reference)
			}
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

func settledOutcome(status string) string {
	switch status {
	case PaymentSucceeded:
		return OutcomeSuccess
	case PaymentFailed:
		return OutcomeFailed
	}
	return OutcomeCancelled
}

// activate marks a paid order's registration complete and queues the confirmation.
func (s *Service) activate(ctx context.Context, tx bun.Tx, order *Order, now time.Time) error {
	if _, err := tx.NewUpdate().Model((*Order)(nil)).Set("status = ?", OrderPaid).Set("paid_at = ?", now).
		Where("id = ? AND status = ?", order.ID, OrderUnpaid).Exec(ctx); err != nil {
		return fmt.Errorf("mark order paid: %w", err)
	}
	order.Status, order.PaidAt = OrderPaid, &now
	if _, err := tx.NewUpdate().Model((*Membership)(nil)).Set("status = ?", MembershipActive).Set("activated_at = ?", now).
		Where("process_instance_id = ? AND status = ?", order.ProcessInstanceID, MembershipPending).Exec(ctx); err != nil {
		return fmt.Errorf("activate memberships: %w", err)
	}
	if _, err := tx.NewUpdate().Model((*ProcessInstance)(nil)).Set("status = ?", StateCompleted).Set("end_time = ?", now).
		Set("version = version + 1").Set("updated_at = ?", now).
		Where("id = ?", order.ProcessInstanceID).Exec(ctx); err != nil {
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

// nullable stores an empty string as NULL.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
