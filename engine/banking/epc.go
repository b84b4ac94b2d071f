package banking

import (
	"errors"
	"fmt"
	"strings"
)

// EPCMaxBytes is the largest EPC069-12 payload; readers may reject more.
const EPCMaxBytes = 331

// EPCPayload builds the EPC069-12 (version 002) SEPA credit transfer
// payload: service tag BCD, version 002, character set 1 (UTF-8),
// identification SCT, the optional BIC, the creditor's name and IBAN, the
// amount as EUR12.34, an empty purpose, the RF reference as the structured
// remittance and nothing after it: the standard forbids unstructured text
// beside a structured reference, and the last element ends the payload
// without a trailing line break.
func EPCPayload(t Transfer) (string, error) {
	var errs []error
	if t.Currency != "EUR" {
		errs = append(errs, &FieldError{Field: "currency", Problem: fmt.Sprintf("EPC codes are EUR only, not %q", t.Currency)})
	}
	if t.Creditor.BIC != "" {
		if _, err := ParseBIC(t.Creditor.BIC); err != nil || t.Creditor.BIC != compact(t.Creditor.BIC) {
			errs = append(errs, &FieldError{Field: "BIC", Problem: fmt.Sprintf("%q is not a BIC of 8 or 11 characters", t.Creditor.BIC)})
		}
	}
	if err := checkText("creditor name", t.Creditor.Name, true, 70); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseIBAN(string(t.Creditor.IBAN)); err != nil || len(t.Creditor.IBAN) > 34 {
		errs = append(errs, &FieldError{Field: "IBAN", Problem: "is missing or not a valid IBAN"})
	}
	if err := checkAmount(t.AmountMinor); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseReference(string(t.Reference)); err != nil || string(t.Reference) != compact(string(t.Reference)) {
		// The structured field holds up to 35 characters; an RF
		// reference has at most 25, so its own check is the limit.
		errs = append(errs, &FieldError{Field: "reference", Problem: "is missing or not an ISO 11649 RF reference"})
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	p := strings.Join([]string{
		"BCD", "002", "1", "SCT",
		t.Creditor.BIC,
		t.Creditor.Name,
		string(t.Creditor.IBAN),
		"EUR" + amountText(t.AmountMinor),
		"", // purpose
		string(t.Reference),
	}, "\n")
	if len(p) > EPCMaxBytes {
		return "", &FieldError{Field: "payload", Problem: fmt.Sprintf("has %d bytes, EPC069-12 allows %d (shorten the creditor name)", len(p), EPCMaxBytes)}
	}
	return p, nil
}
