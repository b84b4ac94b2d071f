package payment

import (
	"context"
	"time"

	"portal/engine/internal/store"
)

// reconcileOnLoadTimeout bounds the reconciliation a registration's load runs.
const reconcileOnLoadTimeout = 5 * time.Second

// ReconcileReport counts what a reconciliation did.
type ReconcileReport struct {
	Checked  int                 // pending attempts asked about
	Settled  int                 // of those, settled by what the provider said
	Refunded int                 // second payments refunded
	Links    []PaymentLinkNotice // payment links made after a failed commit, to e-mail
}

// ReconcilePayments is the periodic job: it asks the provider about
// attempts pending for longer than olderThan (missed webhooks) and makes
// the refunds still due; at most limit of each. The payment job
// (SchedulePayments) runs it every few minutes; a load of a registration
// does the same for that registration, and makes a payment link missing
// since the commit.
func (s *Service) ReconcilePayments(ctx context.Context, olderThan time.Duration, limit int) (_ ReconcileReport, err error) {
	return s.reconcile(ctx, 0, olderThan, limit)
}

func (s *Service) reconcile(ctx context.Context, orderID int64, olderThan time.Duration, limit int) (ReconcileReport, error) {
	var rep ReconcileReport
	pending, err := pendingPaymentsBefore(ctx, s.DB(), s.Clock().Add(-olderThan), orderID, limit)
	if err != nil {
		return rep, err
	}
	for i := range pending {
		p := &pending[i]
		order, err := store.LoadOrder(ctx, s.DB(), p.OrderID)
		if err != nil {
			return rep, err
		}
		rep.Checked++
		res, err := s.refreshPayment(ctx, s.ProviderOf(order.OrganisationID, p), p)
		if err != nil {
			s.Log.WarnContext(ctx, "reconciliation: payment could not be settled", "reference", p.Reference, "err", err)
			continue
		}
		if !res.Replayed {
			rep.Settled++
		}
	}
	rep.Refunded = s.refundDue(ctx, orderID)
	if orderID != 0 {
		// A member loading their registration gets the link the provider
		// could not make at commit. The periodic run leaves those to the
		// payment-link messages (QueueMissingPaymentLinks), which wait out
		// a commit still talking to the provider and mail the link once.
		rep.Links, err = s.createMissingLinks(ctx, orderID, limit)
	}
	return rep, err
}

// ReconcileRegistration runs the reconciliation for the unpaid order of
// one registration, as its page or form loads: a member coming back finds
// the state a lost webhook would have set, and a link the provider could
// not make at commit. Failures are logged only: the page shows what is known.
func (s *Service) ReconcileRegistration(ctx context.Context, userKey string, periodID int64) {
	// A provider that is down must not hold the page for the SDK's timeouts
	// and retries: what it could not tell now, the next load asks again.
	ctx, cancel := context.WithTimeout(ctx, reconcileOnLoadTimeout)
	defer cancel()
	order, err := unpaidOrderOf(ctx, s.DB(), userKey, periodID)
	if err != nil || order == nil {
		if err != nil {
			s.Log.WarnContext(ctx, "reconciliation on load: order could not be loaded", "err", err)
		}
		return
	}
	if _, err := s.reconcile(ctx, order.ID, s.ReconcileAfter, 10); err != nil {
		s.Log.WarnContext(ctx, "reconciliation on load failed", "order", order.ID, "err", err)
	}
}
