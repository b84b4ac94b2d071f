package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
)

// TestGateway is the built-in payment provider for development and tests: its
// payment page is served by this application, and it signs the return with
// an HMAC so that a return cannot be forged by editing the query.
type TestGateway struct {
	key  []byte
	urls TestGatewayURLs
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

// NewTestGateway derives the gateway's signing key from secret (the hash
// secret, so that no further configuration is needed) with a fixed label.
func NewTestGateway(secret string, urls TestGatewayURLs) *TestGateway {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("portal test payment gateway v1"))
	return &TestGateway{key: mac.Sum(nil), urls: urls}
}

// Name implements PaymentProvider.
func (g *TestGateway) Name() string { return "test" }

// CreatePayment implements PaymentProvider.
func (g *TestGateway) CreatePayment(_ context.Context, req PaymentRequest) (string, error) {
	q := url.Values{}
	q.Set("reference", req.Reference)
	q.Set("amount", formatMinor(req.AmountMinor))
	q.Set("currency", req.Currency)
	return g.urls.PayURL(req.Reference) + "?" + q.Encode(), nil
}

// Sign returns the signature of a return for the given values.
func (g *TestGateway) Sign(reference, status, transactionID string) string {
	mac := hmac.New(sha256.New, g.key)
	fmt.Fprintf(mac, "%s\n%s\n%s", reference, status, transactionID)
	return hex.EncodeToString(mac.Sum(nil))
}

// ReturnURL builds the address the test gateway sends the browser back to.
func (g *TestGateway) ReturnURL(reference, status, transactionID string) string {
	q := url.Values{}
	q.Set("reference", reference)
	q.Set("status", status)
	q.Set("transactionId", transactionID)
	q.Set("signature", g.Sign(reference, status, transactionID))
	return g.urls.ReturnURL + "?" + q.Encode()
}

// VerifyReturn implements PaymentProvider.
func (g *TestGateway) VerifyReturn(_ context.Context, ret PaymentReturn) (PaymentOutcome, error) {
	want := g.Sign(ret.Reference, ret.Status, ret.TransactionID)
	if !hmac.Equal([]byte(want), []byte(ret.Signature)) {
		return "", ErrForgedReturn
	}
	switch outcome := PaymentOutcome(ret.Status); outcome {
	case OutcomeSuccess, OutcomeFailed, OutcomeCancelled:
		return outcome, nil
	}
	return "", ErrForgedReturn
}
