package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// WithPaymentProviders replaces how a registration's provider is chosen:
// pick returns the provider of an organisation. The default is the
// environment's one provider for every organisation; per-organisation
// payment settings plug in here.
func WithPaymentProviders(pick func(organisationID int64) engine.PaymentProvider) engine.ServiceOption {
	return func(s *engine.Service) { s.PickProvider = pick }
}

// checkoutLifetime is how long a new checkout takes payments. Stripe allows
// 30 minutes to 24 hours; the pay link makes a new one after it expires.
const checkoutLifetime = 24 * time.Hour

// CheckoutMargin keeps a checkout about to expire from being handed out, so that the
// member does not land on a page that closes while they type.
const CheckoutMargin = 10 * time.Minute

// providerFor is the payment provider of an organisation: its own, or
// the environment's.
func (s *Service) providerFor(organisationID int64) engine.PaymentProvider {
	if p := s.ownProvider(organisationID); p != nil {
		return p
	}
	return s.Payments
}

// ownProvider is the provider of an organisation's own payment settings,
// nil when it pays through the environment's.
func (s *Service) ownProvider(organisationID int64) engine.PaymentProvider {
	if s.PickProvider == nil {
		return nil
	}
	return s.PickProvider(organisationID)
}

// providerNamed is the organisation's provider of that name (the default
// one when it has none: a provider switched off since).
func (s *Service) providerNamed(organisationID int64, name string) engine.PaymentProvider {
	if p := s.providerFor(organisationID); p.Name() == name {
		return p
	}
	return s.Payments
}

// CheckoutFor returns the open attempt of an unpaid order with a live
// checkout, creating one when there is none or the last one expired. It
// runs outside any transaction: the provider is called between short ones.
func (s *Service) CheckoutFor(ctx context.Context, order *engine.Order) (*engine.Payment, error) {
	provider := s.orderProvider(order)
	now := s.Clock()
	last, err := lastPayment(ctx, s.DB(), order.ID)
	if err != nil {
		return nil, err
	}
	if last != nil && last.Status == engine.PaymentPending {
		if last.ExpiresAt == nil || last.ExpiresAt.After(now.Add(CheckoutMargin)) {
			return last, nil
		}
		// Expired or about to: close it at the provider first, so that it
		// cannot be paid beside the new one, then here.
		if err := s.ProviderOf(order.OrganisationID, last).Expire(ctx, *last); err != nil {
			s.Log.WarnContext(ctx, "an expiring checkout could not be closed at the provider", "reference", last.Reference, "err", err)
		}
		if _, err := cancelPayment(ctx, s.DB(), last.ID, now); err != nil {
			return nil, err
		}
	}
	ref := engine.NewReference("PR-")
	req := engine.CheckoutRequest{
		Reference: ref, OrderReference: order.PayReference, AmountMinor: order.TotalMinor, Currency: order.Currency,
		Description: fmt.Sprintf("Membership registration, order %d", order.ID),
		ExpiresAt:   now.Add(checkoutLifetime),
	}
	base := s.OrgBase(ctx, s.DB(), order.OrganisationID)
	req.ReturnURL, req.CancelURL = s.Links.ReturnURL(base, ref), s.Links.CancelURL(base, ref)
	for _, l := range order.Lines {
		req.Lines = append(req.Lines, engine.CheckoutLine{Description: l.Description, AmountMinor: l.AmountMinor})
	}
	co, err := provider.CreateCheckout(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("payment provider: %w", err)
	}
	p := &engine.Payment{OrderID: order.ID, Provider: provider.Name(), Account: accountOf(provider), Reference: ref, AmountMinor: order.TotalMinor,
		Currency: order.Currency, Status: engine.PaymentPending, PaymentURL: co.URL, CreatedAt: now, UpdatedAt: now}
	if co.ProviderID != "" {
		p.ProviderID = &co.ProviderID
	}
	if !co.ExpiresAt.IsZero() {
		exp := co.ExpiresAt.UTC()
		p.ExpiresAt = &exp
	}
	inserted, err := insertPendingPayment(ctx, s.DB(), p)
	if err != nil {
		return nil, err
	}
	if !inserted {
		// Another request opened an attempt for this order meanwhile (two
		// tabs): use that one, and close ours so that only one can be paid.
		if err := provider.Expire(ctx, *p); err != nil {
			s.Log.WarnContext(ctx, "a surplus checkout could not be closed at the provider", "reference", ref, "err", err)
		}
		return pendingPayment(ctx, s.DB(), order.ID)
	}
	return p, nil
}

// StartPayment opens the first payment attempt of a just committed order
// (and, for a bank transfer, queues the e-mail asking for it). When the provider is down the registration stands without one ("payment
// generation failed"): the member is told the link follows, and the next
// load, the pay link or CreateMissingPaymentLinks makes it.
func (s *Service) StartPayment(ctx context.Context, order *engine.Order) string {
	p, err := s.CheckoutFor(ctx, order)
	if err != nil {
		s.Log.WarnContext(ctx, "payment link could not be created; it follows later", "order", order.ID, "err", err)
		return ""
	}
	s.queueTransferRequest(ctx, order, p)
	return s.PayLink(ctx, s.DB(), order)
}

// PayLinkFor returns the stable pay link of an instance's unpaid order, or
// "" while the order has no payment attempt yet (the provider was down at
// commit) or is not unpaid. It only reads: it is called inside transactions.
func (s *Service) PayLinkFor(ctx context.Context, db bun.IDB, instanceID int64) (string, error) {
	order, err := store.LiveOrder(ctx, db, instanceID)
	if err != nil {
		return "", err
	}
	if order.Status != engine.OrderUnpaid {
		return "", nil
	}
	last, err := lastPayment(ctx, db, order.ID)
	if err != nil || last == nil {
		return "", err
	}
	return s.PayLink(ctx, db, order), nil
}

// FollowPayLink answers the stable pay link of an order: the address of
// the provider's checkout for its open attempt, made anew when the last one
// expired, failed or was cancelled. Paying is not tied to a session: the
// link is in e-mails, and its reference is unguessable. A paid or cancelled
// order is a conflict, an unknown reference not found.
func (s *Service) FollowPayLink(ctx context.Context, orderReference string) (_ *engine.Payment, err error) {
	order, err := s.UnpaidOrderByReference(ctx, orderReference)
	if err != nil {
		return nil, err
	}
	return s.checkoutOrUnavailable(ctx, order)
}

// UnpaidOrderByReference loads the unpaid order of a pay link: a paid or
// cancelled one is a conflict, an unknown or another club's not found.
func (s *Service) UnpaidOrderByReference(ctx context.Context, orderReference string) (*engine.Order, error) {
	order, err := orderByPayReference(ctx, s.DB(), orderReference)
	if err != nil {
		return nil, err
	}
	if !engine.InScope(ctx, order.OrganisationID) {
		// Another club's address tells nothing of this order (not even
		// that it is paid).
		return nil, engine.Errorf(engine.CodeNotFound, "order not found")
	}
	switch order.Status {
	case engine.OrderPaid:
		return nil, engine.Errorf(engine.CodeConflict, "this registration is already paid")
	case engine.OrderCancelled:
		return nil, engine.Errorf(engine.CodeConflict, "this registration was changed and this payment link is no longer valid")
	}
	return order, nil
}

// checkoutOrUnavailable is checkoutFor for a member waiting on the pay
// link: a provider that cannot be reached is unavailable.
func (s *Service) checkoutOrUnavailable(ctx context.Context, order *engine.Order) (*engine.Payment, error) {
	p, err := s.CheckoutFor(ctx, order)
	if err != nil {
		var e *engine.Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "the payment provider could not be reached; try again shortly", Err: err}
	}
	return p, nil
}

// PaymentLinkNotice is a payment link made after the commit, for the
// member's e-mail.
type PaymentLinkNotice struct {
	OrderID  int64
	UserKey  string
	PeriodID int64
	Link     string
}

// CreateMissingPaymentLinks makes the checkouts that failed at commit
// ("payment generation failed"), at most limit, and returns the links made,
// for the messages' job to e-mail. The job runner calls it periodically;
// an order whose provider is still down is simply tried the next time.
func (s *Service) CreateMissingPaymentLinks(ctx context.Context, limit int) (_ []PaymentLinkNotice, err error) {
	return s.createMissingLinks(ctx, 0, limit)
}

func (s *Service) createMissingLinks(ctx context.Context, orderID int64, limit int) ([]PaymentLinkNotice, error) {
	orders, err := unpaidOrdersWithoutAttempt(ctx, s.DB(), orderID, limit)
	if err != nil {
		return nil, err
	}
	var made []PaymentLinkNotice
	for i := range orders {
		o := &orders[i]
		if _, err := s.CheckoutFor(ctx, o); err != nil {
			s.Log.WarnContext(ctx, "payment link still could not be created", "order", o.ID, "err", err)
			continue
		}
		made = append(made, PaymentLinkNotice{OrderID: o.ID, UserKey: o.UserKey, PeriodID: o.PeriodID, Link: s.PayLink(ctx, s.DB(), o)})
	}
	return made, nil
}

// PaymentView is what a payment page shows: the attempt and its order.
type PaymentView struct {
	Payment engine.Payment
	Order   *engine.Order
}

// PaymentForPage loads a payment attempt and its order by reference.
func (s *Service) PaymentForPage(ctx context.Context, reference string) (_ *PaymentView, err error) {
	p, err := paymentByReference(ctx, s.DB(), reference)
	if err != nil {
		return nil, err
	}
	order, err := store.LoadOrder(ctx, s.DB(), p.OrderID)
	if err != nil {
		return nil, err
	}
	if !engine.InScope(ctx, order.OrganisationID) { // another organisation's payment reads as none (engine/organisations.go)
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	return &PaymentView{Payment: *p, Order: order}, nil
}

// PayLink is an order's stable pay link on its organisation's address,
// read on db (the pool or the caller's transaction).
func (s *Service) PayLink(ctx context.Context, db bun.IDB, order *engine.Order) string {
	return s.Links.PayLink(s.OrgBase(ctx, db, order.OrganisationID), order.PayReference, order.TotalMinor)
}
