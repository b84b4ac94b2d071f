package engine

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
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
