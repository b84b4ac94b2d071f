package engine

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// PaymentOutcome is what a provider confirms a payment attempt came to.
type PaymentOutcome string

// Payment outcomes reported by a provider's return.
const (
	OutcomeSuccess   PaymentOutcome = "success"
	OutcomeFailed    PaymentOutcome = "failed"
	OutcomeCancelled PaymentOutcome = "cancelled"
)

// PaymentRequest asks a provider for a payment page.
type PaymentRequest struct {
	Reference   string
	AmountMinor int64
	Currency    string
	Description string
}

// PaymentReturn is what the browser brings back from the provider. None of it
// is trusted until the provider verified it.
type PaymentReturn struct {
	Reference     string
	Status        string
	TransactionID string
	Signature     string
}

// PaymentProvider is a payment gateway.
type PaymentProvider interface {
	// Name identifies the provider on stored payments.
	Name() string
	// CreatePayment returns the address the member pays at.
	CreatePayment(ctx context.Context, req PaymentRequest) (string, error)
	// VerifyReturn confirms a return really came from the provider and
	// returns the outcome it confirms. A real provider asks its API here.
	VerifyReturn(ctx context.Context, ret PaymentReturn) (PaymentOutcome, error)
}

// ErrForgedReturn says a payment return failed verification.
var ErrForgedReturn = errors.New("payment return failed verification")

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

// NewReference returns a random, unguessable reference with a prefix.
func NewReference(prefix string) string {
	b := make([]byte, 10)
	rand.Read(b) // never fails (crypto/rand panics on failure since Go 1.24)
	return prefix + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

// formatMinor writes minor units as a decimal amount with two places.
func formatMinor(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return sign + strconv.FormatInt(minor/100, 10) + "." + fmt.Sprintf("%02d", minor%100)
}

// FormatMoney renders an amount for people, for example "EUR 12.50".
func FormatMoney(minor int64, currency string) string { return currency + " " + formatMinor(minor) }
