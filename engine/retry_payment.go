package engine

import "context"

// Paying again from the done page: a committed registration whose payment
// failed or was cancelled gets a new attempt and its link.

// RetryPayment starts a new payment attempt for a committed registration
// (after a failed or cancelled payment) and returns the form with its link.
func (s *Service) RetryPayment(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer ClassifyUnavailable(&err)
	inst, err := loadInstance(ctx, s.db, userKey, processID)
	if err != nil {
		return nil, err
	}
	if inst.Status != StateDone {
		return nil, Errorf(CodeConflict, "this registration is not waiting for payment")
	}
	order, err := liveOrder(ctx, s.db, inst.ID)
	if err != nil {
		return nil, err
	}
	if _, err := s.CheckoutFor(ctx, order); err != nil {
		s.Log.WarnContext(ctx, "payment link could not be created", "order", order.ID, "err", err)
	}
	return s.formFor(ctx, s.db, inst, nil)
}
