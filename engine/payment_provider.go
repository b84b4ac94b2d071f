package engine

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// PaymentOutcome is what a provider says a payment attempt came to.
type PaymentOutcome string

// Payment outcomes a provider confirms.
const (
	OutcomeSuccess   PaymentOutcome = "success"
	OutcomeFailed    PaymentOutcome = "failed"
	OutcomeCancelled PaymentOutcome = "cancelled"
	// OutcomePending: the member paid with an asynchronous method (SEPA
	// debit); the provider confirms success or failure later.
	OutcomePending PaymentOutcome = "pending"
	// OutcomeOpen: the checkout is still open, nothing was paid yet (what a
	// retrieval says before the member finished). It changes nothing.
	OutcomeOpen PaymentOutcome = "open"
)

// CheckoutLine is one order line as the provider's checkout page lists it.
type CheckoutLine struct {
	Description string
	AmountMinor int64
}

// CheckoutRequest asks a provider for a checkout (a payment page) for one
// payment attempt. The addresses come from the caller, which owns the routes.
type CheckoutRequest struct {
	// Reference is the attempt's own reference; the provider echoes it on
	// every confirmation (Stripe: client_reference_id and metadata), and it
	// keys the idempotency of the create call.
	Reference string
	// OrderReference is the order's stable payment reference (for metadata).
	OrderReference string
	AmountMinor    int64
	Currency       string
	Description    string
	Lines          []CheckoutLine
	// ReturnURL is where the browser comes back after paying; CancelURL
	// where it comes back when the member gives up.
	ReturnURL, CancelURL string
	// ExpiresAt is when the checkout should stop taking payments.
	ExpiresAt time.Time
}

// Checkout is what a provider created for an attempt.
type Checkout struct {
	ProviderID string    // the provider's id of the checkout
	URL        string    // where the member pays
	ExpiresAt  time.Time // zero: never
}

// PaymentConfirmation is a provider's word about an attempt: from a signed
// webhook event, a signed browser return (the test gateway) or a retrieval
// from the provider's API. Nothing in it is believed before the provider
// vouched for it; the amount and currency are checked against the attempt.
type PaymentConfirmation struct {
	Reference     string // our attempt reference
	ProviderID    string // the provider's checkout id, when known
	TransactionID string // the provider's id of the payment itself, when known
	Outcome       PaymentOutcome
	AmountMinor   int64
	Currency      string
	// EventID is the provider's event id ("" for a retrieval or a return);
	// an event id is settled once.
	EventID   string
	EventType string
	// Note is recorded with the confirmation (a bank transfer's booking
	// date and the staff's note).
	Note string
	// Accumulate: the amount adds to the earlier partial captures of the
	// attempt's order (bank transfers paid in parts); their sum is checked.
	Accumulate bool
	// OwnAmountMinor is what this confirmation itself brought when
	// AmountMinor is more: the credit that completes earlier parts checks
	// their sum (AmountMinor) but records its own amount, so that the
	// registration's history shows each credit as the bank booked it.
	// 0: AmountMinor.
	OwnAmountMinor int64
	// Actor, when set, is the staff member confirming by hand (a capture
	// on the staff pages): the change is written to the audit log in the
	// same transaction.
	Actor *Actor
}

// RefundRequest asks a provider to give back a payment.
type RefundRequest struct {
	Reference     string // our attempt reference (idempotency)
	ProviderID    string
	TransactionID string
	AmountMinor   int64
	Currency      string
}

// PaymentProvider is a payment gateway. The engine never calls one inside
// a database transaction: on SQLite that would hold the only connection for
// the provider's latency, on PostgreSQL locks.
type PaymentProvider interface {
	// Name identifies the provider on stored payments.
	Name() string
	// CreateCheckout opens a checkout for an attempt.
	CreateCheckout(ctx context.Context, req CheckoutRequest) (Checkout, error)
	// Retrieve asks the provider what became of an attempt (a missed
	// webhook, a member back before the webhook).
	Retrieve(ctx context.Context, p Payment) (PaymentConfirmation, error)
	// Expire closes an open checkout so that it can no longer be paid.
	Expire(ctx context.Context, p Payment) error
	// Refund gives back the money of a succeeded attempt and returns the
	// provider's refund id.
	Refund(ctx context.Context, req RefundRequest) (string, error)
}

// ReturnVerifier is a provider whose browser return is signed and so can
// be believed on its own (the test gateway). A real provider's return is
// never trusted: its webhook or a retrieval settles.
type ReturnVerifier interface {
	VerifyReturn(ctx context.Context, ret PaymentReturn) (PaymentConfirmation, error)
}

// EventParser is a provider that sends signed events (webhooks).
type EventParser interface {
	// ParseEvent verifies payload against its signature and returns the
	// confirmation it carries; nil with no error for an event of a kind
	// the portal does not act on. A bad signature is ErrForgedEvent.
	ParseEvent(payload []byte, signature string) (*PaymentConfirmation, error)
}

// PaymentReturn is what the browser brings back from the provider. None of it
// is trusted until the provider verified it.
type PaymentReturn struct {
	Reference     string
	Status        string
	TransactionID string
	Amount        string
	Currency      string
	Signature     string
}

// ErrForgedReturn says a payment return failed verification.
var ErrForgedReturn = errors.New("payment return failed verification")

// ErrForgedEvent says a provider event failed signature verification.
var ErrForgedEvent = errors.New("payment event failed verification")

// NewReference returns a random, unguessable reference with a prefix.
func NewReference(prefix string) string {
	b := make([]byte, 10)
	rand.Read(b) // never fails (crypto/rand panics on failure since Go 1.24)
	return prefix + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
}

// FormatMinor writes minor units as a decimal amount with two places.
func FormatMinor(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return sign + strconv.FormatInt(minor/100, 10) + "." + fmt.Sprintf("%02d", minor%100)
}

// FormatAmount writes minor units as a decimal amount with two places, as
// the pay link's amount parameter carries it (for example "184.50").
func FormatAmount(minor int64) string { return FormatMinor(minor) }

// ParseAmount reads a decimal amount with at most two places into minor units.
func ParseAmount(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 {
		return 0, fmt.Errorf("amount %q: want digits with at most two decimals", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseUint(whole, 10, 40)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	f, err := strconv.ParseUint(frac, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	return int64(w)*100 + int64(f), nil
}

// FormatMoney renders an amount for people, for example "EUR 12.50".
func FormatMoney(minor int64, currency string) string { return currency + " " + FormatMinor(minor) }

// SecretSealer encrypts the organisations' payment secrets at rest (the
// session key's session.Sealer); aad binds a sealed value to its
// organisation and field, so that it does not open when copied elsewhere.
type SecretSealer interface {
	Seal(plaintext, aad []byte) string
	Open(sealed string, aad []byte) ([]byte, error)
}

// WithSecretSealer sets what seals the organisations' Stripe keys. Without
// one, an organisation cannot be given keys of its own.
func WithSecretSealer(s SecretSealer) ServiceOption { return func(svc *Service) { svc.Sealer = s } }

// PaymentLinks are the portal's own payment addresses. The HTTP layer owns
// the routes and builds them; the engine only fills in references.
type PaymentLinks struct {
	// PayLink is the stable pay link of an order: following it creates or
	// reuses the provider's checkout (the spec's paymentUrl).
	// base is the organisation's address (OrganisationAddress), "" for the
	// links' own.
	PayLink func(base, orderReference string, amountMinor int64) string
	// ReturnURL and CancelURL are where a provider sends the browser back
	// for an attempt.
	ReturnURL func(base, reference string) string
	CancelURL func(base, reference string) string
}

// WithPaymentLinks sets the portal's payment addresses (relative ones by default).
func WithPaymentLinks(l PaymentLinks) ServiceOption { return func(s *Service) { s.Links = l } }

// defaultPaymentLinks are relative addresses, for a service without WithPaymentLinks.
func defaultPaymentLinks() PaymentLinks {
	back := func(status string) func(string, string) string {
		return func(base, ref string) string {
			return base + "/membership/payment-return?" + url.Values{"reference": {ref}, "status": {status}}.Encode()
		}
	}
	return PaymentLinks{
		PayLink: func(base, ref string, amount int64) string {
			return base + "/pay/" + url.PathEscape(ref) + "?" + url.Values{"reference": {ref}, "amount": {FormatMinor(amount)}}.Encode()
		},
		ReturnURL: back(string(OutcomeSuccess)),
		CancelURL: back(string(OutcomeCancelled)),
	}
}

// DefaultReconcileAfter is how long an attempt stays pending before the
// portal asks the provider about it itself (a webhook may have been lost).
const DefaultReconcileAfter = 10 * time.Minute

// WithReconcileAfter sets how long an attempt may stay pending before a
// load of its registration asks the provider (DefaultReconcileAfter).
func WithReconcileAfter(d time.Duration) ServiceOption {
	return func(s *Service) { s.ReconcileAfter = d }
}
