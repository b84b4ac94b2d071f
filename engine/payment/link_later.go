package payment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/jobs"
	"portal/engine/message"
)

// "Payment generation failed" (spec): when the provider could not be
// reached at commit, the registration is committed anyway and the member
// is told that the payment link follows. These are the pieces that make it
// follow: a periodic job queues one message per such order, and the
// message's job makes the checkout before it mails the stable pay link, so
// a provider still down delays the mail (the job retries) but never sends
// a link that cannot be paid yet.

// KindPaymentLink is the message with the payment link of an order whose
// payment could not be created at commit.
const KindPaymentLink engine.MessageKind = "payment_link"

// paymentLinkGrace is how long after its commit an order without a payment
// attempt is left alone: the commit's own attempt to create it (or the
// member's next page load) usually gets there first.
const paymentLinkGrace = 2 * time.Minute

// PaymentLinkPayload names the order of a payment-link message.
type PaymentLinkPayload struct {
	OrderID int64 `json:"orderId"`
}

// QueueMissingPaymentLinks queues the payment-link message of every unpaid
// order of a committed registration that still has no payment attempt
// paymentLinkGrace after its commit. The message's key names the order, so
// re-runs and every instance's run queue it once. It returns how many it
// queued (messages already queued count too).
func QueueMissingPaymentLinks(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	var orders []engine.Order
	err := engine.ScopeOrg(ctx, db.NewSelect().Model(&orders), "organisation_id").Column("id").
		Where("status = ? AND created_at <= ?", engine.OrderUnpaid, now.UTC().Add(-paymentLinkGrace)).
		Where("NOT EXISTS (SELECT 1 FROM payments AS p WHERE p.order_id = ?TableAlias.id)").
		Where("process_instance_id IN (?)", message.CommittedInstances(db)).
		OrderExpr("id").Limit(500).Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("find orders without a payment link: %w", err)
	}
	for i, o := range orders {
		payload, _ := json.Marshal(PaymentLinkPayload{OrderID: o.ID})
		msg := &engine.OutboxMessage{Kind: KindPaymentLink, DedupKey: fmt.Sprintf("%s:order:%d", KindPaymentLink, o.ID),
			Payload: string(payload), CreatedAt: now.UTC()}
		if err := store.QueueMessageNow(ctx, db, msg); err != nil {
			return i, err
		}
	}
	return len(orders), nil
}

// PaymentLinkMessage is what a payment-link message says. Due is false when
// the order was paid or cancelled since it was queued (nothing is sent).
type PaymentLinkMessage struct {
	message.UnpaidReminder
	Link string
}

// ErrPaymentLinkNotYet says the provider still cannot create the payment:
// the message waits (its job retries with backoff).
var ErrPaymentLinkNotYet = engine.Errorf(engine.CodeUnavailable, "the payment provider still cannot create the payment")

// PaymentLinkLater makes the checkout of an order whose payment could not
// be created at commit and gathers the message with its stable pay link.
// The provider is called outside any transaction.
func (s *Service) PaymentLinkLater(ctx context.Context, p PaymentLinkPayload) (*PaymentLinkMessage, error) {
	r, err := message.LoadUnpaidReminder(ctx, s.DB(), message.UnpaidReminderPayload{OrderID: p.OrderID})
	if err != nil {
		return nil, err
	}
	m := &PaymentLinkMessage{UnpaidReminder: *r}
	if !r.Due {
		return m, nil
	}
	if _, err := s.createMissingLinks(ctx, p.OrderID, 1); err != nil {
		return nil, err
	}
	// Made now, or earlier by the member's own page load: either way the
	// order has an attempt once the provider answered.
	var attempts int64
	if attempts, err = s.DB().NewSelect().Model((*engine.Payment)(nil)).Where("order_id = ?", p.OrderID).Count(ctx); err != nil {
		return nil, fmt.Errorf("count payment attempts: %w", err)
	}
	if attempts == 0 {
		return nil, ErrPaymentLinkNotYet
	}
	m.Link = s.PayLink(ctx, s.DB(), &r.Order)
	return m, nil
}

// reconcileEvery is how often the payment jobs run: a missed webhook or a
// provider back from an outage is noticed within minutes.
const reconcileEvery = 5 * time.Minute

// SchedulePayments adds the periodic payment job to r: it queues the
// payment-link messages of orders whose payment could not be created at
// commit, then asks the providers about attempts pending for longer than
// the reconciliation delay (missed webhooks) and makes the refunds still
// due. Every instance schedules it; the runner's dedup keys run it once
// per period.
func (s *Service) SchedulePayments(r *jobs.Runner, now func() time.Time) {
	r.Every(engine.KindReconcilePayments, reconcileEvery)
	r.Handle(engine.KindReconcilePayments, func(ctx context.Context, j *jobs.Job) error {
		ctx = engine.JobScope(ctx, j)
		if n, err := QueueMissingPaymentLinks(ctx, s.DB(), now()); err != nil {
			return err
		} else if n > 0 {
			s.Log.InfoContext(ctx, "queued payment links made after the commit", "count", n)
		}
		rep, err := s.ReconcilePayments(ctx, s.ReconcileAfter, 100)
		if rep.Checked+rep.Refunded > 0 {
			s.Log.InfoContext(ctx, "reconciled payments", "checked", rep.Checked, "settled", rep.Settled, "refunded", rep.Refunded)
		}
		return err
	})
	r.Handle(KindRefundPayment, s.refundJobHandler)
}
