package engine

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
	return &TestGateway{key: key, urls: urls, now: time.Now}
}

// Name implements PaymentProvider.
func (g *TestGateway) Name() string { return TestGatewayProvider }

// CreateCheckout implements PaymentProvider.
func (g *TestGateway) CreateCheckout(_ context.Context, req CheckoutRequest) (Checkout, error) {
	q := url.Values{}
	q.Set("reference", req.Reference)
	q.Set("amount", FormatMinor(req.AmountMinor))
	q.Set("currency", req.Currency)
	exp := req.ExpiresAt
	if exp.IsZero() {
		exp = g.now().Add(testCheckoutLifetime)
	}
	return Checkout{ProviderID: "test_" + req.Reference, URL: g.urls.PayURL(req.Reference) + "?" + q.Encode(), ExpiresAt: exp}, nil
}

// Retrieve implements PaymentProvider. The test gateway keeps no state: its
// signed return is its only word, so a retrieval has nothing to add.
func (g *TestGateway) Retrieve(_ context.Context, p Payment) (PaymentConfirmation, error) {
	return PaymentConfirmation{Reference: p.Reference, Outcome: OutcomeOpen}, nil
}

// Expire implements PaymentProvider; a test checkout needs no closing.
func (g *TestGateway) Expire(context.Context, Payment) error { return nil }

// Refund implements PaymentProvider with a refund id of its own.
func (g *TestGateway) Refund(_ context.Context, req RefundRequest) (string, error) {
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
	amount := FormatMinor(amountMinor)
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
func (g *TestGateway) VerifyReturn(_ context.Context, ret PaymentReturn) (PaymentConfirmation, error) {
	want := g.Sign(ret.Reference, ret.Status, ret.TransactionID, ret.Amount, ret.Currency)
	if !hmac.Equal([]byte(want), []byte(ret.Signature)) {
		return PaymentConfirmation{}, ErrForgedReturn
	}
	amount, err := ParseAmount(ret.Amount)
	if err != nil {
		return PaymentConfirmation{}, ErrForgedReturn
	}
	switch outcome := PaymentOutcome(ret.Status); outcome {
	case OutcomeSuccess, OutcomeFailed, OutcomeCancelled, OutcomePending:
		return PaymentConfirmation{Reference: ret.Reference, TransactionID: ret.TransactionID, Outcome: outcome,
			AmountMinor: amount, Currency: strings.ToUpper(ret.Currency), EventType: "test.return"}, nil
	}
	return PaymentConfirmation{}, ErrForgedReturn
}
