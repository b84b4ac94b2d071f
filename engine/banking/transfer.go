package banking

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Creditor is the account holder who receives the transfers: the club or
// the portal's operator.
type Creditor struct {
	Name string
	IBAN IBAN
	// BIC is optional in SEPA (IBAN-only since 2016); empty: none printed.
	BIC string
	// Address is the creditor's structured postal address; Swiss QR-bills
	// require it, EPC codes do not carry it.
	Address *Address
}

// Validate checks the creditor once, where the bank details are
// configured, so that building a payload later fails only on the
// payment's own fields: a name of at most 70 characters, a valid IBAN, the
// BIC if given, the address if given, and for a Swiss or Liechtenstein
// account (paid with QR-bills) the structured address and an ordinary
// IBAN rather than a QR-IBAN. Its errors are FieldErrors, joined.
func (c Creditor) Validate() error {
	var errs []error
	if err := checkText("creditor name", c.Name, true, 70); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseIBAN(string(c.IBAN)); err != nil {
		errs = append(errs, &FieldError{Field: "IBAN", Problem: strings.TrimPrefix(err.Error(), "IBAN ")})
	}
	if c.BIC != "" {
		if _, err := ParseBIC(c.BIC); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Address != nil {
		if err := c.Address.validate("creditor address"); err != nil {
			errs = append(errs, err)
		}
	}
	if country := c.IBAN.Country(); country == "CH" || country == "LI" {
		if c.Address == nil {
			errs = append(errs, &FieldError{Field: "creditor address", Problem: "is required for a " + country + " account: Swiss QR-bills carry the structured address"})
		}
		if err := checkSwissCharset("creditor name", c.Name); err != nil {
			errs = append(errs, err)
		}
		if c.IBAN.IsQRIBAN() {
			errs = append(errs, &FieldError{Field: "IBAN", Problem: "is a QR-IBAN, which takes only QR references; give the account's ordinary IBAN, the portal uses RF references"})
		}
	}
	return errors.Join(errs...)
}

// Address is a structured postal address as Swiss QR-bills require it
// (address type S): no free-form lines.
type Address struct {
	Street, Number, PostCode, Town string
	// Country is the ISO 3166 two-letter code, upper case.
	Country string
}

// ParseAddress reads the address format of PORTAL_BANK_CREDITOR_ADDRESS:
// five fields separated by semicolons, "street;number;postcode;town;country",
// for example "Bahnhofstrasse;1;8001;Zürich;CH". Number may be empty; the
// others are required.
func ParseAddress(s string) (Address, error) {
	parts := strings.Split(s, ";")
	if len(parts) != 5 {
		return Address{}, fmt.Errorf("address must be street;number;postcode;town;country (five fields separated by ;), got %d fields", len(parts))
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	a := Address{Street: parts[0], Number: parts[1], PostCode: parts[2], Town: parts[3], Country: strings.ToUpper(parts[4])}
	return a, a.validate("address")
}

// String prints the address in ParseAddress's format.
func (a Address) String() string {
	return strings.Join([]string{a.Street, a.Number, a.PostCode, a.Town, a.Country}, ";")
}

// validate checks the lengths of a Swiss QR-bill's structured address
// (Implementation Guidelines QR-bill, section 4.3.2).
func (a Address) validate(field string) error {
	var errs []error
	for _, f := range []struct {
		name, value string
		required    bool
		most        int
	}{
		{"street", a.Street, true, 70},
		{"number", a.Number, false, 16},
		{"postcode", a.PostCode, true, 16},
		{"town", a.Town, true, 35},
	} {
		if err := checkText(field+" "+f.name, f.value, f.required, f.most); err != nil {
			errs = append(errs, err)
		} else if err := checkSwissCharset(field+" "+f.name, f.value); err != nil {
			errs = append(errs, err)
		}
	}
	if !countryShape.MatchString(a.Country) {
		errs = append(errs, &FieldError{Field: field + " country", Problem: "must be a two-letter ISO 3166 code such as CH"})
	}
	return errors.Join(errs...)
}

var (
	countryShape = regexp.MustCompile(`^[A-Z]{2}$`)
	bicShape     = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
)

// ParseBIC reads a BIC (ISO 9362): 8 or 11 characters, spaces ignored.
func ParseBIC(s string) (string, error) {
	b := compact(s)
	if !bicShape.MatchString(b) {
		return "", &FieldError{Field: "BIC", Problem: fmt.Sprintf("%q must be 8 or 11 letters and digits (bank, country, location, branch)", s)}
	}
	return b, nil
}

// Transfer is one payment a member is asked to make.
type Transfer struct {
	Creditor Creditor
	// AmountMinor is the amount in cents (EUR) or Rappen (CHF).
	AmountMinor int64
	// Currency is EUR or CHF.
	Currency  string
	Reference Reference
}

// FieldError says which field of a payload breaks which rule.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// checkText applies the rules every text field of a payload shares: valid
// UTF-8, no control characters (a line break would shift every following
// field of the payload), at most most characters.
func checkText(field, s string, required bool, most int) error {
	switch {
	case s == "" && required:
		return &FieldError{Field: field, Problem: "is required"}
	case !utf8.ValidString(s):
		return &FieldError{Field: field, Problem: "is not valid UTF-8"}
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return &FieldError{Field: field, Problem: "must not hold line breaks or control characters"}
	case utf8.RuneCountInString(s) > most:
		return &FieldError{Field: field, Problem: fmt.Sprintf("has %d characters, at most %d fit", utf8.RuneCountInString(s), most)}
	}
	return nil
}

// checkSwissCharset accepts the characters a QR-bill may hold (Implementation
// Guidelines QR-bill 2.3, section 4.1.1): Basic Latin, Latin-1 Supplement,
// Latin Extended-A, Ș ș Ț ț and €. Banks reject a bill with others.
func checkSwissCharset(field, s string) error {
	for _, r := range s {
		switch {
		case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0x17f, r >= 0x218 && r <= 0x21b, r == 0x20ac:
		default:
			return &FieldError{Field: field, Problem: fmt.Sprintf("holds %q, which QR-bills do not allow (Latin letters only)", r)}
		}
	}
	return nil
}

// maxAmountMinor is 999 999 999.99, the largest amount both EPC069-12 and
// the QR-bill accept.
const maxAmountMinor = 99999999999

// amountText formats minor units as both payloads want them: a point and
// two decimals, no grouping ("1234.50").
func amountText(minor int64) string {
	return strconv.FormatInt(minor/100, 10) + "." + fmt.Sprintf("%02d", minor%100)
}

// checkAmount accepts 0.01 to 999 999 999.99.
func checkAmount(minor int64) error {
	if minor < 1 || minor > maxAmountMinor {
		return &FieldError{Field: "amount", Problem: "must be from 0.01 to 999999999.99"}
	}
	return nil
}

// QRKind names a QR payload standard.
type QRKind string

// The payload standards a Transfer can be encoded in.
const (
	// KindEPC is the European Payments Council's SEPA credit transfer
	// code (EPC069-12, "GiroCode"), for EUR to a SEPA account.
	KindEPC QRKind = "epc"
	// KindSwissQR is the Swiss QR-bill (SIX), for CHF or EUR to a Swiss
	// or Liechtenstein account.
	KindSwissQR QRKind = "swiss-qr-bill"
)

// Payload picks the standard the creditor's bank customers scan (a Swiss
// or Liechtenstein account: the QR-bill; otherwise EPC, which is EUR only)
// and builds its payload.
func (t Transfer) Payload() (QRKind, string, error) {
	switch c := t.Creditor.IBAN.Country(); {
	case c == "CH" || c == "LI":
		p, err := SwissQRPayload(t)
		return KindSwissQR, p, err
	case t.Currency == "EUR":
		p, err := EPCPayload(t)
		return KindEPC, p, err
	default:
		return "", "", &FieldError{Field: "currency", Problem: fmt.Sprintf("%s to a %s account has no QR standard: EPC codes are EUR only, QR-bills need a CH or LI account", t.Currency, c)}
	}
}
