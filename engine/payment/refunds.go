package payment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/jobs"
)

// Refunds of money that came in although it was not owed: a second payment
// of an order (two tabs, two checkouts) or a payment landing on an order a
// reset cancelled. An online provider gives the money back through its API,
// in a job queued with the settlement (so that a webhook answers at once
// and a provider outage only delays the refund); money that came by bank
// transfer goes back by a transfer staff make, so the refund is owed by
// hand until staff mark it paid back (MarkRefundPaidBack).

// KindRefundPayment is the job that refunds one payment through its provider.
const KindRefundPayment = "payment_refund"

// RefundJob is the payload of a KindRefundPayment job.
type RefundJob struct {
	Reference string `json:"reference"`
}

// ErrManualRefund is a provider's answer when it cannot give money back
// itself (a bank transfer): the refund is then owed by hand.
var ErrManualRefund = errors.New("a refund is a transfer staff make from the bank account")

// owe marks a succeeded attempt's money as to be given back, in the
// settlement's transaction, and queues its refund (or, for a bank
// transfer, leaves it to staff).
func (s *Service) owe(ctx context.Context, tx bun.Tx, p *engine.Payment, order *engine.Order, now time.Time) error {
	p.RefundStatus, p.RefundManual, p.UpdatedAt = engine.RefundDue, p.Provider == BankTransferProvider, now
	if err := UpdatePayment(ctx, tx, p, "refund_status", "refund_manual", "updated_at"); err != nil {
		return err
	}
	if p.RefundManual {
		s.Log.WarnContext(ctx, "a bank transfer arrived for an order that is not waiting for payment; staff are to transfer it back",
			"order", order.ID, "order_status", order.Status, "reference", p.Reference)
		return nil
	}
	s.Log.WarnContext(ctx, "payment succeeded for an order that is not waiting for payment; refunding it",
		"order", order.ID, "order_status", order.Status, "reference", p.Reference)
	if _, err := jobs.Enqueue(ctx, tx, now, jobs.Spec{Kind: KindRefundPayment, DedupKey: "payment_refund:" + p.Reference,
		Payload: RefundJob{Reference: p.Reference}}); err != nil {
		return fmt.Errorf("queue refund of %s: %w", p.Reference, err)
	}
	return nil
}

// refundJobHandler runs a KindRefundPayment job: a provider that fails is
// retried with the runner's backoff (and, past its attempts, by the
// periodic reconciliation, which makes every refund still due).
func (s *Service) refundJobHandler(ctx context.Context, j *jobs.Job) error {
	var job RefundJob
	if err := j.Decode(&job); err != nil {
		return jobs.Permanent(err)
	}
	p, err := paymentByReference(ctx, s.DB(), job.Reference)
	if err != nil {
		if engine.ErrorCode(err) == engine.CodeNotFound {
			return jobs.Permanent(err)
		}
		return err
	}
	_, err = s.refundOne(ctx, p)
	return err
}

// refundOne gives back the money of one attempt due for a refund, outside
// any transaction, and records the refund. It reports whether a refund was
// made; an attempt no longer due (refunded meanwhile) makes none.
func (s *Service) refundOne(ctx context.Context, p *engine.Payment) (bool, error) {
	if p.RefundStatus != engine.RefundDue || p.RefundManual {
		return false, nil
	}
	order, err := store.LoadOrder(ctx, s.DB(), p.OrderID)
	if err != nil {
		return false, err
	}
	req := engine.RefundRequest{Reference: p.Reference, AmountMinor: p.AmountMinor, Currency: p.Currency}
	if p.ProviderID != nil {
		req.ProviderID = *p.ProviderID
	}
	if p.TransactionID != nil {
		req.TransactionID = *p.TransactionID
	}
	id, err := s.ProviderOf(order.OrganisationID, p).Refund(ctx, req)
	if errors.Is(err, ErrManualRefund) {
		// The provider cannot: owed by hand from now on, asked no more.
		if _, err := s.DB().NewUpdate().Model((*engine.Payment)(nil)).Set("refund_manual = ?", true).Set("updated_at = ?", s.Clock()).
			Where("id = ? AND refund_status = ?", p.ID, engine.RefundDue).Exec(ctx); err != nil {
			return false, fmt.Errorf("record manual refund of %s: %w", p.Reference, err)
		}
		s.Log.WarnContext(ctx, "this refund is a transfer staff make; it is listed until marked paid back", "reference", p.Reference, "order", p.OrderID)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("refund %s: %w", p.Reference, err)
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		now := s.Clock()
		if err := markRefunded(ctx, tx, p.ID, id, now); err != nil {
			return err
		}
		return engine.EmitPaymentEvent(ctx, tx, engine.EventPaymentRefunded, p, order, id, now)
	})
	if err != nil {
		return false, fmt.Errorf("refund %s made (%s) but not recorded: %w", p.Reference, id, err)
	}
	s.Log.InfoContext(ctx, "second payment refunded", "reference", p.Reference, "order", p.OrderID, "refund", id)
	return true, nil
}

// refundDue makes the refunds still due through their providers (of one
// order, or of every order for orderID 0): the reconciliation's safety net
// behind the refund jobs. A refund the provider refused stays due.
func (s *Service) refundDue(ctx context.Context, orderID int64) int {
	due, err := refundsDue(ctx, s.DB(), orderID, 50)
	if err != nil {
		s.Log.ErrorContext(ctx, "refunds due could not be loaded", "err", err)
		return 0
	}
	done := 0
	for i := range due {
		made, err := s.refundOne(ctx, &due[i])
		if err != nil {
			s.Log.ErrorContext(ctx, "refund of a second payment failed; it is retried", "reference", due[i].Reference, "order", due[i].OrderID, "err", err)
		}
		if made {
			done++
		}
	}
	return done
}

// MarkRefundPaidBack records that staff transferred back the money of a
// payment owed by hand (reference: the attempt's PR-…, or a bank
// transfer's RF reference), with their note. Marking it twice changes
// nothing and says so (a conflict); a payment owing nothing is a conflict too.
func (s *Service) MarkRefundPaidBack(ctx context.Context, reference, note string) (*engine.Payment, error) {
	return s.markRefundPaidBack(ctx, nil, reference, note)
}

// StaffMarkRefundPaidBack is MarkRefundPaidBack by a staff member or an
// API key, audited in its transaction.
func (s *Service) StaffMarkRefundPaidBack(ctx context.Context, actor engine.Actor, reference, note string) (*engine.Payment, error) {
	return s.markRefundPaidBack(ctx, &actor, reference, note)
}

func (s *Service) markRefundPaidBack(ctx context.Context, actor *engine.Actor, reference, note string) (_ *engine.Payment, err error) {
	p, err := s.refundTarget(ctx, reference)
	if err != nil {
		return nil, err
	}
	if !engine.InScope(ctx, s.OrgOfOrder(ctx, p.OrderID)) {
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	switch {
	case p.RefundStatus == engine.RefundDone:
		return nil, engine.Errorf(engine.CodeConflict, "the refund of %s was recorded before", p.Reference)
	case p.RefundStatus != engine.RefundDue || !p.RefundManual:
		return nil, engine.Errorf(engine.CodeConflict, "payment %s owes no refund by hand", p.Reference)
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		now := s.Clock()
		res, err := tx.NewUpdate().Model((*engine.Payment)(nil)).Set("refund_status = ?", engine.RefundDone).
			Set("refund_id = ?", "manual:"+p.Reference).Set("refunded_at = ?", now).Set("refund_note = ?", note).
			Set("updated_at = ?", now).Where("id = ? AND refund_status = ?", p.ID, engine.RefundDue).Exec(ctx)
		if err != nil {
			return fmt.Errorf("record refund paid back: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return engine.Errorf(engine.CodeConflict, "the refund of %s was recorded before", p.Reference)
		}
		order, err := store.LoadOrder(ctx, tx, p.OrderID)
		if err != nil {
			return err
		}
		if err := engine.EmitPaymentEvent(ctx, tx, engine.EventPaymentRefunded, p, order, "manual:"+p.Reference, now); err != nil {
			return err
		}
		if actor == nil {
			return nil
		}
		instance := order.ProcessInstanceID
		return s.Audit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: order.OrganisationID, Action: "payment.refund_paid_back",
			TargetType: "registration", TargetID: fmt.Sprint(instance), InstanceID: &instance,
			Before: map[string]any{"reference": p.Reference, "refund": engine.RefundDue},
			After:  map[string]any{"reference": p.Reference, "refund": engine.RefundDone, "note": note}})
	})
	if err != nil {
		return nil, err
	}
	return paymentByReference(ctx, s.DB(), p.Reference)
}

// refundTarget finds the attempt a staff reference names: a bank
// transfer's RF reference (or an order's PO- reference) names the oldest
// attempt of that order owing a refund, an attempt's own reference itself.
func (s *Service) refundTarget(ctx context.Context, reference string) (*engine.Payment, error) {
	ref := strings.TrimSpace(reference)
	if !strings.HasPrefix(strings.ToUpper(ref), "RF") && !strings.HasPrefix(ref, "PO-") {
		return paymentByReference(ctx, s.DB(), ref)
	}
	p, err := s.BankAttempt(ctx, ref)
	if err != nil {
		return nil, err
	}
	var owing []engine.Payment
	if err := s.DB().NewSelect().Model(&owing).Where("order_id = ? AND refund_status <> ''", p.OrderID).
		Order("refund_status DESC", "id ASC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load refunds of %s: %w", ref, err)
	}
	if len(owing) == 1 {
		return &owing[0], nil
	}
	return p, nil
}
