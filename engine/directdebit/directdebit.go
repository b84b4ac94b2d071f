// Package directdebit is SEPA Direct Debit (Core) as an engine
// PaymentProvider: the club collects the money itself, by a pain.008 file
// its bank executes, under the mandate the member gave. Its "checkout" is
// the portal's own page (the pay link); nothing is called outside the
// portal, and the attempt stays pending until the club collects it.
package directdebit

import (
	"context"
	"errors"
	"fmt"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
)

// Name is the provider's name on stored payments.
const Name = payment.DirectDebitProvider

// Provider is direct debit to one creditor's account.
type Provider struct {
	creditor   banking.Creditor
	creditorID string
	payLink    func(orderReference string, amountMinor int64) string
}

// New returns the provider for the creditor's account and SEPA Creditor
// Identifier; payLink is the portal's stable pay link, where the member
// gives or sees the mandate.
func New(creditor banking.Creditor, creditorID string, payLink func(orderReference string, amountMinor int64) string) (*Provider, error) {
	if err := creditor.Validate(); err != nil {
		return nil, fmt.Errorf("direct debit: %w", err)
	}
	if _, err := banking.ParseCreditorID(creditorID); err != nil {
		return nil, fmt.Errorf("direct debit: %w", err)
	}
	if payLink == nil {
		return nil, errors.New("direct debit: the pay link is required")
	}
	return &Provider{creditor: creditor, creditorID: creditorID, payLink: payLink}, nil
}

// Name identifies the provider on stored payments.
func (p *Provider) Name() string { return Name }

// Creditor is the account the debits are collected to.
func (p *Provider) Creditor() banking.Creditor { return p.creditor }

// CreditorID is the club's SEPA Creditor Identifier.
func (p *Provider) CreditorID() string { return p.creditorID }

// CreateCheckout only points at the portal's own page: a debit is
// collected by the club, not paid by the member.
func (p *Provider) CreateCheckout(_ context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	if !payment.MethodTakes(Name, req.Currency) {
		// Not offered for such a payment (payment.MethodTakes): reaching
		// here is a defect, not the member's doing.
		return engine.Checkout{}, fmt.Errorf("direct debit: SEPA debits are in %s, not %s", payment.DirectDebitCurrency, req.Currency)
	}
	return engine.Checkout{URL: p.payLink(req.OrderReference, req.AmountMinor)}, nil
}

// Retrieve has nothing to ask: only the club's collection settles a debit.
func (p *Provider) Retrieve(_ context.Context, pay engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: pay.Reference, Outcome: engine.OutcomeOpen}, nil
}

// Expire has nothing to close.
func (p *Provider) Expire(context.Context, engine.Payment) error { return nil }

// Refund cannot be made by the portal: a collected debit goes back by a
// transfer staff make, as a bank transfer's does.
func (p *Provider) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", payment.ErrManualRefund
}
