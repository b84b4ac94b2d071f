package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

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
	instanceID, err := instanceOfPayment(ctx, tx, reference)
	if err != nil {
		return nil, nil, err
	}
	if err := lockInstance(ctx, tx, instanceID); err != nil {
		return nil, nil, err
	}
	p, err := paymentByReference(ctx, tx, reference)
	if err != nil {
		return nil, nil, err
	}
	order, err := loadOrder(ctx, tx, p.OrderID)
	if err != nil {
		return nil, nil, err
	}
	return p, order, nil
}

// activate marks a paid order's registration complete and queues the confirmation.
func (s *Service) activate(ctx context.Context, tx bun.Tx, order *Order, now time.Time) error {
	if err := markOrderPaid(ctx, tx, order.ID, now); err != nil {
		return err
	}
	order.Status, order.PaidAt = OrderPaid, &now
	if err := activatePendingMemberships(ctx, tx, order.ProcessInstanceID, now); err != nil {
		return err
	}
	if err := completeInstance(ctx, tx, order.ProcessInstanceID, now); err != nil {
		return err
	}
	persons, err := activeMembersOf(ctx, tx, order.ProcessInstanceID)
	if err != nil {
		return err
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
	return queueMessage(ctx, tx, msg)
}
