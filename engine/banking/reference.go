package banking

import (
	"fmt"
	"regexp"
	"strings"
)

// Reference is an ISO 11649 structured creditor reference in its
// electronic form: "RF", two check digits and 1 to 21 letters or digits,
// such as RF18539007547034. Banks carry it unchanged from payer to payee,
// which is what lets a statement credit be matched to its order.
type Reference string

var referenceShape = regexp.MustCompile(`^RF[0-9]{2}[A-Z0-9]{1,21}$`)

// ParseReference reads an RF reference as people write it (spaces, lower
// case) and verifies its check digits.
func ParseReference(s string) (Reference, error) {
	e := compact(s)
	if !referenceShape.MatchString(e) {
		return "", fmt.Errorf("creditor reference %q must be RF, two check digits and 1 to 21 letters or digits", s)
	}
	// ISO 7064 MOD 97-10 check digits are 02 to 98: with 00 (or 01, 99)
	// the sum can come out right by chance (00 stands for 97), so such a
	// reference is refused outright rather than one time in 97.
	if cd := e[2:4]; cd < "02" || cd > "98" || mod97(e[4:]+e[:4]) != 1 {
		return "", fmt.Errorf("creditor reference %q: check digits do not match", s)
	}
	return Reference(e), nil
}

// CreditorReference derives the RF reference of an order or payment from
// its identifier, such as the portal's payment reference "PR-ABCD..." or a
// decimal order id. The letters and digits of id, upper-cased, become the
// reference's body, so two identifiers get the same reference only when
// they differ just in case or separators ('-', '_', '.', '/', spaces):
// the derivation is deterministic and, over identifiers of one shape,
// unique; it can be recomputed from the identifier at any time.
func CreditorReference(id string) (Reference, error) {
	var body strings.Builder
	for _, r := range strings.ToUpper(id) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			body.WriteRune(r)
		case r == '-', r == '_', r == '.', r == '/', r == ' ':
		default:
			return "", fmt.Errorf("creditor reference: identifier %q holds %q; only letters, digits and - _ . / are allowed", id, r)
		}
	}
	b := body.String()
	if b == "" || len(b) > 21 {
		return "", fmt.Errorf("creditor reference: identifier %q must have 1 to 21 letters or digits, it has %d", id, len(b))
	}
	check := 98 - mod97(b+"RF00")
	return Reference(fmt.Sprintf("RF%02d%s", check, b)), nil
}

// String prints the reference for people: groups of four.
func (r Reference) String() string { return groupsOfFour(string(r)) }
