package registration

import (
	"context"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/payment"
)

// Paying again from the done page: a committed registration whose payment
// failed or was cancelled gets a new attempt and its link.

// RetryPayment starts a new payment attempt for a committed registration
// (after a failed or cancelled payment) and returns the form with its link.
func (s *Service) RetryPayment(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	inst, err := store.LoadInstance(ctx, s.DB(), userKey, processID)
	if err != nil {
		return nil, err
	}
	if inst.Status != engine.StateDone {
		return nil, engine.Errorf(engine.CodeConflict, "this registration is not waiting for payment")
	}
	order, err := store.LiveOrder(ctx, s.DB(), inst.ID)
	if err != nil {
		return nil, err
	}
	if _, err := payment.Of(s.Service).CheckoutFor(ctx, order); err != nil {
		s.Log.WarnContext(ctx, "payment link could not be created", "order", order.ID, "err", err)
	}
	return s.formFor(ctx, s.DB(), inst, nil)
}
