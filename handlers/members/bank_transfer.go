package members

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"portal/engine"
	"portal/engine/banktransfer"
	"portal/engine/payment"
	"portal/views"
	"portal/views/transferview"
)

// bankTransferOf returns the bank transfer a registration's pay link asks
// for, or nil when the order is paid another way: by the method the
// member chose, else the organisation's default. Only for bank transfer
// is the pay link followed here: for an online provider that would open
// a checkout on every load of the done page.
func (s *Server) bankTransferOf(ctx context.Context, organisationID int64, payLink string) (*views.BankTransferModel, error) {
	if payLink == "" {
		return nil, nil //nolint:nilnil // no link yet: nothing to show
	}
	u, err := url.Parse(payLink)
	if err != nil {
		return nil, fmt.Errorf("pay link: %w", err)
	}
	provider := payment.Of(s.engine).ProviderFor(organisationID)
	if choice, err := payment.Of(s.engine).PayLinkMethods(ctx, u.Query().Get("reference")); err == nil {
		provider = payment.Of(s.engine).MethodProvider(organisationID, choice.Current)
	}
	if _, ok := provider.(*banktransfer.Provider); !ok {
		return nil, nil //nolint:nilnil // paid another way: the page links to it
	}
	p, err := payment.Of(s.engine).FollowPayLink(ctx, u.Query().Get("reference"))
	if err != nil {
		return nil, err
	}
	return s.bankTransferModel(ctx, p)
}

// bankTransferModel is what memberview.BankTransfer shows for an attempt of the
// bank-transfer provider: the transfer still owed (engine.BankTransferDue,
// less the parts that arrived) with its QR code; nil for any other attempt.
func (s *Server) bankTransferModel(ctx context.Context, p *engine.Payment) (*views.BankTransferModel, error) {
	if p.Provider != banktransfer.Name {
		return nil, nil //nolint:nilnil // not a bank transfer
	}
	view, err := payment.Of(s.engine).PaymentForPage(ctx, p.Reference)
	if err != nil {
		return nil, err
	}
	due, err := payment.Of(s.engine).BankTransferDue(ctx, p.OrderID)
	if err != nil {
		return nil, err
	}
	if due == nil {
		// Bank transfer was switched off after the member was asked to
		// transfer: the account is no longer configured to print.
		return nil, errors.New("bank transfer attempt, but bank transfer is not configured")
	}
	return transferview.Page(ctx, transferview.Due{Transfer: *due, TotalMinor: view.Order.TotalMinor})
}
