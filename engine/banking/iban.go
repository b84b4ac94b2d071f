package banking

import (
	"fmt"
	"regexp"
	"strings"
)

// IBAN is an International Bank Account Number in its electronic form:
// upper case, no spaces, check digits and country length verified. Its zero
// value is "no account"; ParseIBAN is the only way to make one.
type IBAN string

// ibanLengths is the length of an IBAN per country, from the SWIFT IBAN
// registry. A country not listed has no IBAN, so its IBANs are rejected
// rather than accepted at any length.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
	"BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
	"DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
	"FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
	"GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
	"MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
	"PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
	"YE": 30,
}

var ibanShape = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]+$`)

// ParseIBAN reads an IBAN as people write it (spaces, lower case) and
// checks its country length and its mod-97 check digits (ISO 13616).
func ParseIBAN(s string) (IBAN, error) {
	e := compact(s)
	if e == "" {
		return "", fmt.Errorf("IBAN is empty")
	}
	if !ibanShape.MatchString(e) {
		return "", fmt.Errorf("IBAN %q must be two letters, two check digits and letters or digits", s)
	}
	want, ok := ibanLengths[e[:2]]
	if !ok {
		return "", fmt.Errorf("IBAN %q: country %s has no IBAN", s, e[:2])
	}
	if len(e) != want {
		return "", fmt.Errorf("IBAN %q: %s IBANs have %d characters, this one has %d", s, e[:2], want, len(e))
	}
	if mod97(e[4:]+e[:4]) != 1 {
		return "", fmt.Errorf("IBAN %q: check digits do not match (a typing error?)", s)
	}
	return IBAN(e), nil
}

// Country is the IBAN's ISO 3166 country code.
func (i IBAN) Country() string {
	if len(i) < 2 {
		return ""
	}
	return string(i[:2])
}

// IsQRIBAN reports whether the IBAN is a Swiss QR-IBAN (institution id
// 30000 to 31999), which Swiss QR-bills accept only with a QR reference.
func (i IBAN) IsQRIBAN() bool {
	c := i.Country()
	if (c != "CH" && c != "LI") || len(i) < 9 {
		return false
	}
	iid := string(i[4:9])
	return iid >= "30000" && iid <= "31999"
}

// String prints the IBAN for people: groups of four separated by spaces.
func (i IBAN) String() string { return groupsOfFour(string(i)) }

// compact removes the spaces people put into IBANs and references and
// upper-cases the rest.
func compact(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// groupsOfFour separates s into groups of four characters.
func groupsOfFour(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mod97 is the remainder by 97 of s read as a number in which the letters
// A to Z stand for 10 to 35 (ISO 7064 MOD 97-10, as IBANs and ISO 11649
// references use it). s holds only A-Z and 0-9.
func mod97(s string) int {
	r := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			r = (r*100 + int(c-'A'+10)) % 97
		}
	}
	return r
}
