package banking

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// sepaCountries are the countries and territories of the SEPA scheme
// (EPC409-09, the list of countries of the SEPA schemes' geographical
// scope): only a creditor identifier of one of them can collect SEPA
// direct debits, and only an IBAN of one of them can be debited.
var sepaCountries = map[string]bool{
	"AD": true, "AT": true, "BE": true, "BG": true, "CH": true, "CY": true, "CZ": true, "DE": true,
	"DK": true, "EE": true, "ES": true, "FI": true, "FR": true, "GB": true, "GI": true, "GR": true,
	"HR": true, "HU": true, "IE": true, "IS": true, "IT": true, "LI": true, "LT": true, "LU": true,
	"LV": true, "MC": true, "MT": true, "NL": true, "NO": true, "PL": true, "PT": true, "RO": true,
	"SE": true, "SI": true, "SK": true, "SM": true, "VA": true,
	// French overseas departments and territories, Åland, the Crown
	// dependencies and Spanish/Portuguese islands use their own codes in
	// the ISO list but are part of SEPA.
	"AX": true, "BL": true, "GF": true, "GG": true, "GP": true, "IM": true, "JE": true, "MF": true,
	"MQ": true, "PM": true, "RE": true, "YT": true,
}

// nonEEACountries are the SEPA countries outside the European Economic
// Area: a direct debit to or from an account there needs the bank's BIC
// (the rulebook allows IBAN only within the EEA).
var nonEEACountries = map[string]bool{
	"AD": true, "CH": true, "GB": true, "GG": true, "GI": true, "IM": true, "JE": true,
	"MC": true, "PM": true, "SM": true, "VA": true,
}

// IsSEPACountry reports whether an ISO 3166 country code (of an IBAN or a
// creditor identifier) belongs to the SEPA schemes.
func IsSEPACountry(country string) bool { return sepaCountries[strings.ToUpper(country)] }

// NeedsBIC reports whether a SEPA direct debit to or from an account in
// country (an IBAN's) needs the bank's BIC beside the IBAN: a SEPA
// country outside the EEA (Switzerland, the United Kingdom, Monaco, ...),
// where the EPC rulebook does not allow the IBAN alone.
func NeedsBIC(country string) bool { return nonEEACountries[strings.ToUpper(country)] }

// creditorIDLengths is the length of a creditor identifier in the
// countries whose national identifier has one fixed length (EPC262-08,
// "Creditor Identifier Overview"): the countries of most of the clubs
// this portal serves. Other SEPA countries are checked for shape, check
// digits and the 35-character maximum only, rather than risk refusing a
// valid identifier.
var creditorIDLengths = map[string]int{
	"AT": 18, "DE": 18, "ES": 16, "FR": 13, "IT": 23, "LU": 26, "NL": 19,
}

var creditorIDShape = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{3}[A-Z0-9]+$`)

// ParseCreditorID reads a SEPA Creditor Identifier (CI, "Gläubiger-ID") as
// people write it and returns it normalised: upper case, no spaces. A CI is
// the country code, two check digits, a three-character Creditor Business
// Code the creditor may choose freely, and the national identifier. The
// check digits are ISO 7064 MOD 97-10 over the national identifier and the
// country code, with the business code ignored (EPC262-08); the country
// must be a SEPA country and the length the one the country uses.
func ParseCreditorID(s string) (string, error) {
	e := compact(s)
	if e == "" {
		return "", errors.New("creditor identifier is empty")
	}
	if len(e) > 35 {
		return "", fmt.Errorf("creditor identifier %q is longer than 35 characters", s)
	}
	if !creditorIDShape.MatchString(e) {
		return "", fmt.Errorf("creditor identifier %q must be two letters, two check digits, a three-character business code and the national identifier (letters and digits)", s)
	}
	country := e[:2]
	if !sepaCountries[country] {
		return "", fmt.Errorf("creditor identifier %q: %s is not a SEPA country", s, country)
	}
	if want, ok := creditorIDLengths[country]; ok && len(e) != want {
		return "", fmt.Errorf("creditor identifier %q: %s identifiers have %d characters, this one has %d", s, country, want, len(e))
	}
	if mod97(e[7:]+country+e[2:4]) != 1 {
		return "", fmt.Errorf("creditor identifier %q: check digits do not match (a typing error?)", s)
	}
	return e, nil
}

// creditorIDCheckDigits computes the check digits of a creditor identifier
// for a country and a national identifier (tests and examples build valid
// identifiers with it).
func creditorIDCheckDigits(country, national string) string {
	n := 98 - mod97(compact(national)+strings.ToUpper(country)+"00")
	return fmt.Sprintf("%02d", n)
}

// mandateReferenceChars is the character set of a mandate reference: the
// SEPA basic Latin set without the space-free restriction (EPC rulebook,
// Restricted Character Set for identifiers).
const mandateReferenceChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ "

// CheckMandateReference says why s cannot be a mandate reference (the
// rulebook's "Unique Mandate Reference", AT-01): 1 to 35 characters of
// a-z A-Z 0-9 / - ? : ( ) . , ' + and space, not starting or ending with
// '/' and without '//' (the restriction the EPC implementation guidelines
// put on every identifier); nil when it can.
func CheckMandateReference(s string) error {
	switch {
	case s == "":
		return errors.New("mandate reference is empty")
	case len(s) > 35:
		return fmt.Errorf("mandate reference %q is longer than 35 characters", s)
	case strings.TrimSpace(s) == "":
		return errors.New("mandate reference is only spaces")
	}
	for _, r := range s {
		if !strings.ContainsRune(mandateReferenceChars, r) {
			return fmt.Errorf("mandate reference %q contains %q, outside the SEPA character set (a-z A-Z 0-9 / - ? : ( ) . , ' + space)", s, r)
		}
	}
	if strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//") {
		return fmt.Errorf("mandate reference %q must not start or end with '/' nor contain '//'", s)
	}
	return nil
}

// MandateReference derives the mandate reference of a mandate from its id:
// prefix (upper-cased, reduced to letters and digits, at most 20
// characters and fewer when the id is long, "MANDATE" when empty), a dash
// and the id in decimal. The prefix has no dash, so a reference reads
// back as one prefix and one id: ids are unique, so references are unique
// per creditor as long as one creditor keeps one prefix. The result always
// passes CheckMandateReference.
func MandateReference(prefix string, id int64) string {
	digits := strconv.FormatInt(id, 10)
	most := min(20, 35-1-len(digits))
	var b strings.Builder
	for _, r := range strings.ToUpper(SEPAText(prefix, 0)) {
		if b.Len() >= most {
			break
		}
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	p := b.String()
	if p == "" {
		p = "MANDATE"[:min(7, most)]
	}
	return p + "-" + digits
}
