package payment

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"portal/engine"
	"portal/engine/clock"
)

// TestGateway is the built-in payment provider for development and tests: its
// payment page is served by this application, and it signs the return with
// an HMAC so that a return cannot be forged by editing the query. It may run
// only on a loopback http address (cmd/portal refuses it otherwise): whoever
// reaches its page decides the outcome of their own payment.
type TestGateway struct {
	key  []byte
	urls TestGatewayURLs
	now  func() time.Time
}

// TestGatewayURLs are the full addresses of the pages the test gateway sends
// the browser to. The HTTP layer serves them and owns their routes, so it
// builds them; the gateway only adds the query.
type TestGatewayURLs struct {
	// PayURL returns the address of the payment page for a reference, without a query.
	PayURL func(reference string) string
	// ReturnURL is the address the browser comes back to after paying, without a query.
	ReturnURL string
}

// testCheckoutLifetime is how long a test checkout takes payments, as long
// as Stripe's default, so that the expiry path runs in development too.
const testCheckoutLifetime = 24 * time.Hour

// NewTestGateway returns a test gateway with a signing key of its own,
// random per process: a return signed by one run is worthless to the next,
// and no configured secret (such as the hash secret) is reused for it.
func NewTestGateway(urls TestGatewayURLs) *TestGateway {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand panics on failure since Go 1.24)
	return &TestGateway{key: key, urls: urls, now: clock.Now}
}

// Name implements PaymentProvider.
func (g *TestGateway) Name() string { return TestGatewayProvider }

// CreateCheckout implements PaymentProvider.
func (g *TestGateway) CreateCheckout(_ context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	q := url.Values{}
	q.Set("reference", req.Reference)
	q.Set("amount", engine.FormatMinor(req.AmountMinor))
	q.Set("currency", req.Currency)
	exp := req.ExpiresAt
	if exp.IsZero() {
		exp = g.now().Add(testCheckoutLifetime)
	}
	return engine.Checkout{ProviderID: "test_" + req.Reference, URL: g.urls.PayURL(req.Reference) + "?" + q.Encode(), ExpiresAt: exp}, nil
}

// Retrieve implements PaymentProvider. The test gateway keeps no state: its
// signed return is its only word, so a retrieval has nothing to add.
func (g *TestGateway) Retrieve(_ context.Context, p engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeOpen}, nil
}

// Expire implements PaymentProvider; a test checkout needs no closing.
func (g *TestGateway) Expire(context.Context, engine.Payment) error { return nil }

// Refund implements PaymentProvider with a refund id of its own.
func (g *TestGateway) Refund(_ context.Context, req engine.RefundRequest) (string, error) {
	return "test_refund_" + req.Reference, nil
}

// Sign returns the signature of a return for the given values.
func (g *TestGateway) Sign(reference, status, transactionID, amount, currency string) string {
	mac := hmac.New(sha256.New, g.key)
	fmt.Fprintf(mac, "%s\n%s\n%s\n%s\n%s", reference, status, transactionID, amount, currency)
	return hex.EncodeToString(mac.Sum(nil))
}

// ReturnURL builds the address the test gateway sends the browser back to,
// with the amount paid.
func (g *TestGateway) ReturnURL(reference, status, transactionID string, amountMinor int64, currency string) string {
	amount := engine.FormatMinor(amountMinor)
	q := url.Values{}
	q.Set("reference", reference)
	q.Set("status", status)
	q.Set("transactionId", transactionID)
	q.Set("amount", amount)
	q.Set("currency", currency)
	q.Set("signature", g.Sign(reference, status, transactionID, amount, currency))
	return g.urls.ReturnURL + "?" + q.Encode()
}

// VerifyReturn implements ReturnVerifier.
func (g *TestGateway) VerifyReturn(_ context.Context, ret engine.PaymentReturn) (engine.PaymentConfirmation, error) {
	want := g.Sign(ret.Reference, ret.Status, ret.TransactionID, ret.Amount, ret.Currency)
	if !hmac.Equal([]byte(want), []byte(ret.Signature)) {
		return engine.PaymentConfirmation{}, engine.ErrForgedReturn
	}
	amount, err := engine.ParseAmount(ret.Amount)
	if err != nil {
		return engine.PaymentConfirmation{}, engine.ErrForgedReturn
	}
	switch outcome := engine.PaymentOutcome(ret.Status); outcome {
	case engine.OutcomeSuccess, engine.OutcomeFailed, engine.OutcomeCancelled, engine.OutcomePending:
		return engine.PaymentConfirmation{Reference: ret.Reference, TransactionID: ret.TransactionID, Outcome: outcome,
			AmountMinor: amount, Currency: strings.ToUpper(ret.Currency), EventType: "test.return"}, nil
	}
	return engine.PaymentConfirmation{}, engine.ErrForgedReturn
}
