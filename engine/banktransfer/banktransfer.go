// Package banktransfer is payment by bank transfer as an engine
// PaymentProvider: its "checkout" is the portal's own page (the pay link),
// which shows the bank details, the RF creditor reference and the QR code
// that engine/banking builds. Nothing is called outside the portal; the
// attempt stays pending until staff capture the money
// (engine.Service.CapturePayment) or a bank statement import does.
package banktransfer

import (
	"context"
	"errors"
	"fmt"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
)

// Name is the provider's name on stored payments.
const Name = payment.BankTransferProvider

// ErrManualRefund says that money that came by bank transfer goes back by bank
// transfer, which staff make; the portal cannot.
// It is the engine's ErrManualRefund, so that the refund is owed by hand.
var ErrManualRefund = payment.ErrManualRefund

// Provider is payment by bank transfer to one account.
type Provider struct {
	creditor banking.Creditor
	payLink  func(orderReference string, amountMinor int64) string
}

// New returns the provider for the creditor's account, which must pass
// banking's validation (checked at start-up, so that building a payment's
// QR code later fails only on the payment's own fields). payLink is the
// portal's stable pay link (engine.PaymentLinks.PayLink): the page that
// shows the transfer.
func New(creditor banking.Creditor, payLink func(orderReference string, amountMinor int64) string) (*Provider, error) {
	if err := creditor.Validate(); err != nil {
		return nil, fmt.Errorf("bank transfer: %w", err)
	}
	if payLink == nil {
		return nil, errors.New("bank transfer: the pay link is required")
	}
	return &Provider{creditor: creditor, payLink: payLink}, nil
}

// Name identifies the provider on stored payments.
func (p *Provider) Name() string { return Name }

// Creditor is the account members transfer to.
func (p *Provider) Creditor() banking.Creditor { return p.creditor }

// CreateCheckout derives the attempt's RF reference from the order's
// payment reference (unique, and the same for every attempt of the order,
// so that a transfer made days later still finds it) and checks that a QR
// payload can be built for the amount and currency, so that a transfer
// that cannot be printed fails at commit ("payment generation failed")
// rather than on the member's page. The RF reference is the attempt's
// provider id: capture and import look attempts up by it.
func (p *Provider) CreateCheckout(_ context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	ref, err := banking.CreditorReference(req.OrderReference)
	if err != nil {
		return engine.Checkout{}, fmt.Errorf("bank transfer: %w", err)
	}
	t := banking.Transfer{Creditor: p.creditor, AmountMinor: req.AmountMinor, Currency: req.Currency, Reference: ref}
	if _, _, err := t.Payload(); err != nil {
		return engine.Checkout{}, fmt.Errorf("bank transfer: %w", err)
	}
	// No expiry: a transfer is made when the member gets round to it.
	return engine.Checkout{ProviderID: string(ref), URL: p.payLink(req.OrderReference, req.AmountMinor)}, nil
}

// Retrieve has nothing to ask: only a capture settles a bank transfer.
func (p *Provider) Retrieve(_ context.Context, pay engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: pay.Reference, Outcome: engine.OutcomeOpen}, nil
}

// Expire has nothing to close: a closed attempt's reference no longer
// matches an open payment, and money that still arrives for it is listed
// by the import for staff.
func (p *Provider) Expire(context.Context, engine.Payment) error { return nil }

// Refund cannot be made by the portal: the refund stays owed by hand
// until staff mark it paid back (engine.Service.MarkRefundPaidBack).
func (p *Provider) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", ErrManualRefund
}

// Transfer is what the member is asked to transfer for an attempt of this
// provider: the account, amount, currency and the attempt's RF reference.
func (p *Provider) Transfer(pay engine.Payment) (banking.Transfer, error) {
	if pay.Provider != Name || pay.ProviderID == nil {
		return banking.Transfer{}, fmt.Errorf("bank transfer: payment %s is not a bank transfer", pay.Reference)
	}
	ref, err := banking.ParseReference(*pay.ProviderID)
	if err != nil {
		return banking.Transfer{}, fmt.Errorf("bank transfer: payment %s: %w", pay.Reference, err)
	}
	return banking.Transfer{Creditor: p.creditor, AmountMinor: pay.AmountMinor, Currency: pay.Currency, Reference: ref}, nil
}
