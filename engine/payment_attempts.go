package engine

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

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
	inserted, err := insertPendingPayment(ctx, db, p)
	if err != nil {
		return "", err
	}
	if !inserted {
		// Another request opened an attempt for this order meanwhile: use that one.
		open, err := pendingPayment(ctx, db, order.ID)
		if err != nil {
			return "", err
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
	last, err := lastPayment(ctx, db, order.ID)
	if err != nil {
		return "", err
	}
	if last != nil && last.Status == PaymentPending {
		return last.PaymentURL, nil
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

// PaymentView is what the payment page of the test gateway shows.
type PaymentView struct {
	Payment Payment
	Order   *Order
}

// PaymentForPage loads a payment attempt and its order by reference.
func (s *Service) PaymentForPage(ctx context.Context, reference string) (_ *PaymentView, err error) {
	defer classifyUnavailable(&err)
	p, err := paymentByReference(ctx, s.db, reference)
	if err != nil {
		return nil, err
	}
	order, err := loadOrder(ctx, s.db, p.OrderID)
	if err != nil {
		return nil, err
	}
	if !inScope(ctx, order.OrganisationID) { // another tenant's payment reads as none (tenants.go)
		return nil, Errorf(CodeNotFound, "payment not found")
	}
	return &PaymentView{Payment: *p, Order: order}, nil
}
