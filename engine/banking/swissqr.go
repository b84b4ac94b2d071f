package banking

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SwissQRMaxChars is the largest QR-bill payload (Implementation
// Guidelines QR-bill 2.3, section 4.1.2).
const SwissQRMaxChars = 997

// SwissQRPayload builds the Swiss QR-bill payload (SPC, version 0200,
// coding 1): the creditor's CH or LI IBAN and structured address (type S;
// combined addresses are no longer accepted), no ultimate creditor, the
// amount with two decimals in CHF or EUR, no debtor (the member fills it in
// their banking app), reference type SCOR with the RF reference, no
// additional information, and the EPD trailer. A QR-IBAN is refused: it
// takes only 27-digit QR references, never RF ones.
func SwissQRPayload(t Transfer) (string, error) {
	var errs []error
	c := t.Creditor
	switch {
	case c.IBAN.Country() != "CH" && c.IBAN.Country() != "LI":
		errs = append(errs, &FieldError{Field: "IBAN", Problem: "a QR-bill needs a CH or LI IBAN"})
	case c.IBAN.IsQRIBAN():
		errs = append(errs, &FieldError{Field: "IBAN", Problem: "is a QR-IBAN, which takes only QR references; use the account's ordinary IBAN for RF references"})
	default:
		if _, err := ParseIBAN(string(c.IBAN)); err != nil {
			errs = append(errs, &FieldError{Field: "IBAN", Problem: "is not a valid IBAN"})
		}
	}
	if err := checkText("creditor name", c.Name, true, 70); err != nil {
		errs = append(errs, err)
	} else if err := checkSwissCharset("creditor name", c.Name); err != nil {
		errs = append(errs, err)
	}
	if c.Address == nil {
		errs = append(errs, &FieldError{Field: "creditor address", Problem: "a QR-bill needs the creditor's structured address"})
	} else if err := c.Address.validate("creditor address"); err != nil {
		errs = append(errs, err)
	}
	if t.Currency != "CHF" && t.Currency != "EUR" {
		errs = append(errs, &FieldError{Field: "currency", Problem: fmt.Sprintf("a QR-bill takes CHF or EUR, not %q", t.Currency)})
	}
	if err := checkAmount(t.AmountMinor); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseReference(string(t.Reference)); err != nil || string(t.Reference) != compact(string(t.Reference)) {
		errs = append(errs, &FieldError{Field: "reference", Problem: "is missing or not an ISO 11649 RF reference"})
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	a := c.Address
	fields := []string{
		"SPC", "0200", "1",
		string(c.IBAN),
		"S", c.Name, a.Street, a.Number, a.PostCode, a.Town, a.Country,
		"", "", "", "", "", "", "", // ultimate creditor: reserved, empty
		amountText(t.AmountMinor), t.Currency,
		"", "", "", "", "", "", "", // ultimate debtor: unknown
		"SCOR", string(t.Reference),
		"", // unstructured message
		"EPD",
	}
	// Elements are separated by CR LF; the last one ends the payload.
	p := strings.Join(fields, "\r\n")
	if n := utf8.RuneCountInString(p); n > SwissQRMaxChars {
		return "", &FieldError{Field: "payload", Problem: fmt.Sprintf("has %d characters, the QR-bill allows %d", n, SwissQRMaxChars)}
	}
	return p, nil
}
