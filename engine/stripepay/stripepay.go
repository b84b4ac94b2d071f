// Package stripepay is the Stripe Checkout adapter: it implements the
// engine's PaymentProvider (and EventParser for webhooks) on stripe-go,
// pinned to the API version of its SDK (stripe.APIVersion).
package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v86"
	"github.com/stripe/stripe-go/v86/webhook"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/payment"
)

// Name is the provider's name on stored payments and in the webhook route:
// the engine's name for it, so that the word is spelt in one place.
const Name = payment.StripeProvider

// Config is what the adapter needs.
type Config struct {
	// SecretKey is the account's secret (or restricted) API key.
	SecretKey string
	// WebhookSecret is the signing secret of the webhook endpoint (whsec_...).
	WebhookSecret string
	// APIURL is the API's address; empty: Stripe's. Tests point it at stripe-mock.
	APIURL string
	// HTTPClient, when set, makes the API calls (timeouts); nil: a client
	// with a 20 s timeout.
	HTTPClient *http.Client
	// MaxNetworkRetries is how often the SDK retries a failed call (with the
	// same idempotency key); nil: the SDK's default.
	MaxNetworkRetries *int64
}

// Provider is Stripe Checkout as an engine.PaymentProvider.
type Provider struct {
	client        *stripe.Client
	webhookSecret string
	account       string
}

// New returns the adapter; the secret key and webhook secret are required.
func New(cfg Config) (*Provider, error) {
	if cfg.SecretKey == "" || cfg.WebhookSecret == "" {
		return nil, errors.New("stripe: the secret key and the webhook signing secret are required")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	bc := &stripe.BackendConfig{HTTPClient: hc, MaxNetworkRetries: cfg.MaxNetworkRetries,
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}} // errors are logged once, by the engine
	if cfg.APIURL != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.APIURL, "/"))
	}
	return &Provider{
		client:        stripe.NewClient(cfg.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc))),
		webhookSecret: cfg.WebhookSecret,
		account:       payment.AccountOf(cfg.SecretKey),
	}, nil
}

// Account implements engine.AccountHolder: the fingerprint of the secret
// key, stored on every payment this provider makes, so that its refund
// and retrieval still use this key after the keys changed.
func (p *Provider) Account() string { return p.account }

// Name implements engine.PaymentProvider.
func (p *Provider) Name() string { return Name }

// Stripe allows a Checkout Session to live from 30 minutes to 24 hours.
const (
	minLifetime = 31 * time.Minute
	maxLifetime = 24 * time.Hour
)

// CheckoutParams builds the Checkout Session of an attempt: payment mode,
// our reference as client_reference_id and in metadata, the order lines as
// line items, an expiry, and an idempotency key from the reference (a
// retried create returns the same session instead of a second one).
func CheckoutParams(req engine.CheckoutRequest, now time.Time) *stripe.CheckoutSessionCreateParams {
	cur := strings.ToLower(req.Currency)
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(req.Reference),
		SuccessURL:        stripe.String(req.ReturnURL),
		CancelURL:         stripe.String(req.CancelURL),
		Metadata:          map[string]string{"reference": req.Reference, "order_reference": req.OrderReference},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			Description: stripe.String(req.Description),
			Metadata:    map[string]string{"reference": req.Reference, "order_reference": req.OrderReference},
		},
	}
	exp := req.ExpiresAt
	switch {
	case exp.IsZero() || exp.Sub(now) > maxLifetime:
		exp = now.Add(maxLifetime)
	case exp.Sub(now) < minLifetime:
		exp = now.Add(minLifetime)
	}
	params.ExpiresAt = stripe.Int64(exp.Unix())
	params.SetIdempotencyKey("checkout-" + req.Reference)
	for _, l := range lineItems(req) {
		params.LineItems = append(params.LineItems, &stripe.CheckoutSessionCreateLineItemParams{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency: stripe.String(cur), UnitAmount: stripe.Int64(l.AmountMinor),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(l.Description)},
			},
		})
	}
	return params
}

// lineItems are the order lines as Stripe takes them. Stripe has no
// negative line items: an order with a discount line is one item for the
// total, named after the order, so that the sum charged is the order's.
func lineItems(req engine.CheckoutRequest) []engine.CheckoutLine {
	var sum int64
	ok := len(req.Lines) > 0
	for _, l := range req.Lines {
		sum += l.AmountMinor
		if l.AmountMinor < 0 || l.Description == "" {
			ok = false
		}
	}
	if ok && sum == req.AmountMinor {
		return req.Lines
	}
	return []engine.CheckoutLine{{Description: req.Description, AmountMinor: req.AmountMinor}}
}

// CreateCheckout implements engine.PaymentProvider.
func (p *Provider) CreateCheckout(ctx context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	// Stripe keeps real time, the engine the portal's clock (engine/clock,
	// moved by PORTAL_CLOCK in development and the calendar tests; the
	// same in production): the expiry is asked in the one and returned in
	// the other, so that a checkout lives as long on either.
	real := time.Now()
	shift := clock.Now().Sub(real).Truncate(time.Second)
	if !req.ExpiresAt.IsZero() {
		req.ExpiresAt = req.ExpiresAt.Add(-shift)
	}
	params := CheckoutParams(req, real)
	cs, err := p.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return engine.Checkout{}, fmt.Errorf("stripe: create checkout session: %w", err)
	}
	if cs.URL == "" || cs.ID == "" {
		return engine.Checkout{}, errors.New("stripe: the checkout session has no id or url")
	}
	// The expiry is the one asked for: Stripe honours it (and stripe-mock
	// answers a fixed date in 2009, which would renew every checkout).
	return engine.Checkout{ProviderID: cs.ID, URL: cs.URL, ExpiresAt: time.Unix(*params.ExpiresAt, 0).UTC().Add(shift)}, nil
}

// Retrieve implements engine.PaymentProvider: the session's state now.
func (p *Provider) Retrieve(ctx context.Context, pay engine.Payment) (engine.PaymentConfirmation, error) {
	if pay.ProviderID == nil {
		return engine.PaymentConfirmation{}, errors.New("stripe: the attempt has no checkout session")
	}
	cs, err := p.client.V1CheckoutSessions.Retrieve(ctx, *pay.ProviderID, nil)
	if err != nil {
		return engine.PaymentConfirmation{}, fmt.Errorf("stripe: retrieve checkout session: %w", err)
	}
	c := confirmationOf(cs, "")
	c.EventType = "retrieval"
	return c, nil
}

// Expire implements engine.PaymentProvider. A session that is no longer
// open (paid or expired already) is not an error: it cannot be paid anyway.
func (p *Provider) Expire(ctx context.Context, pay engine.Payment) error {
	if pay.ProviderID == nil {
		return nil
	}
	_, err := p.client.V1CheckoutSessions.Expire(ctx, *pay.ProviderID, nil)
	var se *stripe.Error
	if errors.As(err, &se) && se.HTTPStatusCode == http.StatusBadRequest {
		return nil // "only open sessions can be expired"
	}
	if err != nil {
		return fmt.Errorf("stripe: expire checkout session: %w", err)
	}
	return nil
}

// Refund implements engine.PaymentProvider: the whole payment back, once
// (the idempotency key is the attempt's reference).
func (p *Provider) Refund(ctx context.Context, req engine.RefundRequest) (string, error) {
	pi := req.TransactionID
	if pi == "" && req.ProviderID != "" {
		cs, err := p.client.V1CheckoutSessions.Retrieve(ctx, req.ProviderID, nil)
		if err != nil {
			return "", fmt.Errorf("stripe: retrieve checkout session for a refund: %w", err)
		}
		if cs.PaymentIntent != nil {
			pi = cs.PaymentIntent.ID
		}
	}
	if pi == "" {
		return "", errors.New("stripe: no payment intent to refund")
	}
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(pi), Amount: stripe.Int64(req.AmountMinor),
		Reason: stripe.String(string(stripe.RefundReasonDuplicate)), Metadata: map[string]string{"reference": req.Reference}}
	params.SetIdempotencyKey("refund-" + req.Reference)
	r, err := p.client.V1Refunds.Create(ctx, params)
	if err != nil {
		return "", fmt.Errorf("stripe: refund: %w", err)
	}
	return r.ID, nil
}

// The Checkout Session events the portal acts on.
const (
	EventCompleted      = "checkout.session.completed"
	EventAsyncSucceeded = "checkout.session.async_payment_succeeded"
	EventAsyncFailed    = "checkout.session.async_payment_failed"
	EventExpired        = "checkout.session.expired"
)

// ParseEvent implements engine.EventParser: the signature (and its age,
// five minutes at most, against replays) is checked by stripe-go's
// webhook.ConstructEvent, which also refuses events of another API
// version train than the SDK's.
func (p *Provider) ParseEvent(payload []byte, signature string) (*engine.PaymentConfirmation, error) {
	ev, err := webhook.ConstructEvent(payload, signature, p.webhookSecret)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", engine.ErrForgedEvent, err)
	}
	switch string(ev.Type) {
	case EventCompleted, EventAsyncSucceeded, EventAsyncFailed, EventExpired:
	default:
		return nil, nil //nolint:nilnil // an event the portal does not act on
	}
	if ev.Data == nil {
		return nil, errors.New("stripe: event without data")
	}
	var cs stripe.CheckoutSession
	if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
		return nil, fmt.Errorf("stripe: event data: %w", err)
	}
	if cs.ClientReferenceID == "" {
		return nil, nil //nolint:nilnil // a session some other system made on the same account
	}
	c := confirmationOf(&cs, string(ev.Type))
	c.EventID, c.EventType = ev.ID, string(ev.Type)
	return &c, nil
}

// confirmationOf reads a Checkout Session as a confirmation. eventType
// decides for the asynchronous events; a retrieval ("") reads the status.
func confirmationOf(cs *stripe.CheckoutSession, eventType string) engine.PaymentConfirmation {
	c := engine.PaymentConfirmation{Reference: cs.ClientReferenceID, ProviderID: cs.ID,
		AmountMinor: cs.AmountTotal, Currency: strings.ToUpper(string(cs.Currency))}
	if cs.PaymentIntent != nil {
		c.TransactionID = cs.PaymentIntent.ID
	}
	paid := cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid || cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusNoPaymentRequired
	switch {
	case eventType == EventAsyncSucceeded:
		c.Outcome = engine.OutcomeSuccess
	case eventType == EventAsyncFailed:
		c.Outcome = engine.OutcomeFailed
	case eventType == EventExpired || cs.Status == stripe.CheckoutSessionStatusExpired:
		c.Outcome = engine.OutcomeCancelled
	case cs.Status == stripe.CheckoutSessionStatusComplete && paid:
		c.Outcome = engine.OutcomeSuccess
	case cs.Status == stripe.CheckoutSessionStatusComplete:
		// Completed but unpaid: an asynchronous method (SEPA debit) confirms later.
		c.Outcome = engine.OutcomePending
	default:
		c.Outcome = engine.OutcomeOpen
	}
	return c
}
