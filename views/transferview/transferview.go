// Package transferview turns a bank transfer still owed
// (engine.Service.BankTransferDue) into what views draw of it: one mapping
// of account, amount, reference and QR code for the pay page and for every
// e-mail that asks for the transfer, so that they never disagree.
package transferview

import (
	"context"
	"fmt"
	"strings"

	"portal/engine"
	"portal/engine/banking"
	"portal/views"
	"portal/views/lang"
)

// qrScale is the PNG's pixels per module: a code of some 60 modules comes
// out at about 270 pixels, sharp on a phone held beside a screen.
const qrScale = 4

// Due is a transfer still owed and the order's total it is part of.
type Due struct {
	Transfer banking.Transfer
	// TotalMinor is the order's total; more than the transfer's amount
	// when part of it arrived already.
	TotalMinor int64
}

// model maps the transfer's fields and encodes its QR code.
func model(ctx context.Context, d Due) (views.BankTransferModel, banking.Code, error) {
	t := d.Transfer
	code, err := t.QRCode()
	if err != nil {
		return views.BankTransferModel{}, banking.Code{}, fmt.Errorf("bank transfer QR code: %w", err)
	}
	address := ""
	if a := t.Creditor.Address; a != nil {
		address = strings.TrimSpace(a.Street+" "+a.Number) + ", " + a.PostCode + " " + a.Town + ", " + a.Country
	}
	return views.BankTransferModel{
		Creditor: t.Creditor.Name, CreditorAddress: address, IBAN: t.Creditor.IBAN.String(), IBANCompact: string(t.Creditor.IBAN), BIC: t.Creditor.BIC,
		Amount: engine.FormatAmount(t.AmountMinor), Currency: t.Currency,
		Reference: t.Reference.String(), ReferenceCompact: string(t.Reference),
		QRName:     lang.T(ctx, "bank_transfer_qr_name"),
		PartlyPaid: d.TotalMinor > t.AmountMinor,
	}, code, nil
}

// Page is the transfer as a page shows it: the QR code as inline SVG and
// copy buttons beside the fields.
func Page(ctx context.Context, d Due) (*views.BankTransferModel, error) {
	m, code, err := model(ctx, d)
	if err != nil {
		return nil, err
	}
	m.QRSVG, m.Interactive = code.SVG(m.QRName), true
	return &m, nil
}

// QRImage is the QR code as an e-mail carries it: a PNG sent inline with
// the message, which the HTML refers to by its Content-ID.
type QRImage struct {
	Name      string
	PNG       []byte
	ContentID string
}

// Mail is the transfer as an e-mail shows it: the QR code as a PNG sent
// inline with the message (the sender attaches the QRImage) and referred
// to by its Content-ID, since mail clients show neither inline SVG nor, by
// default, images from the web.
func Mail(ctx context.Context, d Due) (*views.BankTransferModel, QRImage, error) {
	m, code, err := model(ctx, d)
	if err != nil {
		return nil, QRImage{}, err
	}
	png, err := code.PNG(qrScale)
	if err != nil {
		return nil, QRImage{}, err
	}
	id := "qr-" + strings.ToLower(string(d.Transfer.Reference)) + "@portal"
	m.QRImageURL = "cid:" + id
	return &m, QRImage{Name: "transfer-qr-code.png", PNG: png, ContentID: id}, nil
}
