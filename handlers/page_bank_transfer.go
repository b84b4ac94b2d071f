package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"portal/engine"
	"portal/engine/banktransfer"
	"portal/views"
)

// qrName names the bank-transfer QR code for screen readers.
const qrName = "QR code of this bank transfer"

// bankTransferOf returns the bank transfer a registration's pay link asks
// for, or nil when the organisation pays another way. Only for bank
// transfer is the pay link followed here: for an online provider that
// would open a checkout on every load of the done page.
func (s *Server) bankTransferOf(ctx context.Context, organisationID int64, payLink string) (*views.BankTransferModel, error) {
	if payLink == "" {
		return nil, nil //nolint:nilnil // no link yet: nothing to show
	}
	if _, ok := s.engine.ProviderFor(organisationID).(*banktransfer.Provider); !ok {
		return nil, nil //nolint:nilnil // paid online: the page links to the checkout
	}
	u, err := url.Parse(payLink)
	if err != nil {
		return nil, fmt.Errorf("pay link: %w", err)
	}
	p, err := s.engine.FollowPayLink(ctx, u.Query().Get("reference"))
	if err != nil {
		return nil, err
	}
	return s.bankTransferModel(ctx, p)
}

// bankTransferModel is what views.BankTransfer shows for an attempt of the
// bank-transfer provider, with its QR code; nil for any other attempt.
func (s *Server) bankTransferModel(ctx context.Context, p *engine.Payment) (*views.BankTransferModel, error) {
	if p.Provider != banktransfer.Name {
		return nil, nil //nolint:nilnil // not a bank transfer
	}
	view, err := s.engine.PaymentForPage(ctx, p.Reference)
	if err != nil {
		return nil, err
	}
	bt, ok := s.engine.ProviderFor(view.Order.OrganisationID).(*banktransfer.Provider)
	if !ok {
		// Bank transfer was switched off after the member was asked to
		// transfer: the account is no longer configured to print.
		return nil, errors.New("bank transfer attempt, but bank transfer is not configured")
	}
	tr, err := bt.Transfer(*p)
	if err != nil {
		return nil, err
	}
	code, err := tr.QRCode()
	if err != nil {
		return nil, fmt.Errorf("bank transfer QR code: %w", err)
	}
	return &views.BankTransferModel{
		Creditor: tr.Creditor.Name, IBAN: tr.Creditor.IBAN.String(), IBANCompact: string(tr.Creditor.IBAN), BIC: tr.Creditor.BIC,
		Amount: engine.FormatAmount(tr.AmountMinor), Currency: tr.Currency,
		Reference: tr.Reference.String(), ReferenceCompact: string(tr.Reference),
		QRSVG: code.SVG(qrName), QRName: qrName, Interactive: true,
	}, nil
}
