// Package views holds the templ components and their view models. Views get
// everything ready to print: no database, no services.
package views

import (
	"context"
)

// Chrome is what every page frame needs: its title and the asset addresses.
type Chrome struct {
	Title  string // without the "Error: " prefix; Error adds it
	Error  bool   // the page shows a validation error: the title starts with "Error:"
	Assets Assets
}

// Assets are the content-hashed addresses of the static files.
type Assets struct {
	CSS  string
	HTMX string
	App  string
}

// FullTitle is the document title.
func (c Chrome) FullTitle(ctx context.Context) string {
	if c.Error {
		return tr(ctx, "title_error", map[string]any{"Title": c.Title})
	}
	return tr(ctx, "title", map[string]any{"Title": c.Title})
}

// ErrorModel is an error page.
type ErrorModel struct {
	Chrome
	Message  string
	Link     string // optional way on
	LinkText string
}

// OrderLineModel is one printed order line.
type OrderLineModel struct {
	Description string
	Amount      string
}

// ContinueModel carries a browser across a cross-site arrival, after which
// SameSite=Strict cookies are sent again.
type ContinueModel struct {
	Chrome
	URL string
}

// BankTransferModel is what a member needs to pay by bank transfer: the
// fields to type into a banking app, each also in the form to copy, and
// the QR code that fills them in. The handler or mail builder maps
// engine/banking's types to these strings.
type BankTransferModel struct {
	Creditor string
	// CreditorAddress is the account holder's postal address in one line;
	// empty: the row is left out.
	CreditorAddress string
	// IBAN is printed in groups of four; IBANCompact, without spaces, is
	// what the copy button copies (some banking apps refuse spaces).
	IBAN, IBANCompact string
	// BIC is optional; empty: the row is left out.
	BIC string
	// Amount is "184.50" (what the amount field of a banking app takes),
	// Currency "EUR" or "CHF".
	Amount, Currency string
	// Reference is the RF creditor reference in groups of four;
	// ReferenceCompact is its electronic form.
	Reference, ReferenceCompact string
	// QRSVG is the code as an inline SVG element from engine/banking,
	// which names it (role img, aria-label) and escapes all text in it.
	QRSVG string
	// QRImageURL, when set, shows the code as an image instead (e-mails:
	// a cid: or data: URL of its PNG), with QRName as its alternative text.
	QRImageURL string
	QRName     string
	// Interactive adds the copy buttons (pages, not e-mails).
	Interactive bool
	// PartlyPaid says part of the order's total arrived already: Amount
	// is what is still open.
	PartlyPaid bool
}

// BankTransferField is one printed field of a bank transfer.
type BankTransferField struct {
	// Key names the field in ids and data-testid: creditor, iban, bic,
	// amount, reference.
	Key, Label string
	// Shown is printed; Copy is what the copy button puts on the clipboard.
	Shown, Copy string
}

// Fields lists the fields in the order banking apps ask for them.
func (m BankTransferModel) Fields(ctx context.Context) []BankTransferField {
	fs := []BankTransferField{
		{Key: "creditor", Label: tr(ctx, "bank_transfer_creditor"), Shown: m.Creditor, Copy: m.Creditor},
	}
	if m.CreditorAddress != "" {
		fs = append(fs, BankTransferField{Key: "address", Label: tr(ctx, "bank_transfer_address"), Shown: m.CreditorAddress, Copy: m.CreditorAddress})
	}
	fs = append(fs, BankTransferField{Key: "iban", Label: tr(ctx, "bank_transfer_iban"), Shown: m.IBAN, Copy: m.IBANCompact})
	if m.BIC != "" {
		fs = append(fs, BankTransferField{Key: "bic", Label: tr(ctx, "bank_transfer_bic"), Shown: m.BIC, Copy: m.BIC})
	}
	return append(fs,
		BankTransferField{Key: "amount", Label: tr(ctx, "bank_transfer_amount"), Shown: m.Currency + " " + m.Amount, Copy: m.Amount},
		BankTransferField{Key: "reference", Label: tr(ctx, "bank_transfer_reference"), Shown: m.Reference, Copy: m.ReferenceCompact},
	)
}
