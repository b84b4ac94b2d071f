package banking

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Expected is a payment the portal waits for: an open bank-transfer
// attempt with its reference and the amount it asks for.
type Expected struct {
	Reference   Reference
	AmountMinor int64
	Currency    string
	// PaidMinor is what earlier partial credits paid of it already.
	PaidMinor int64
}

// Outcome is what Match proposes for one credit.
type Outcome string

// The outcomes of Match. Only OutcomeExact is safe to capture without a
// person looking at it; the others are listed for staff with their reason.
const (
	// OutcomeExact: the credit carries an open payment's reference and
	// exactly its amount and currency, or exactly what is left of it after
	// partial credits (this statement's or earlier ones').
	OutcomeExact Outcome = "exact"
	// OutcomeByAmount: no usable reference, but the amount and currency
	// are those of exactly one open payment and of no other credit
	// without a reference. A proposal for staff to confirm.
	OutcomeByAmount Outcome = "by_amount"
	// OutcomePartial: an open payment's reference with less than what is
	// left of its amount: captured as a part, completed by later credits.
	OutcomePartial Outcome = "partial"
	// OutcomeExcess: an open payment's reference with more than its amount.
	OutcomeExcess Outcome = "excess"
	// OutcomeCurrency: an open payment's reference in another currency.
	OutcomeCurrency Outcome = "currency"
	// OutcomeDuplicate: the credit was listed before (same ID), or its
	// payment was already paid in full by an earlier credit: money to
	// refund, not to capture again.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeUnknown: no open payment can be told from the credit.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeSecond: the credit's reference is a payment already paid in
	// full (the member paid twice). Match never says it (it knows only the
	// open payments); the import does, and records the money as owed back.
	OutcomeSecond Outcome = "second_payment"
)

// Proposal is Match's answer for one credit.
type Proposal struct {
	Credit Credit
	// Expected is the open payment the credit is for; nil when unknown
	// or when the credit itself is listed twice.
	Expected *Expected
	Outcome  Outcome
	// Reason says why, for the import's report.
	Reason string
	// Reference is the well-formed reference an unknown credit names
	// (not an open payment): the caller may know it as a paid one.
	Reference Reference
}

var rfStart = regexp.MustCompile(`^RF[0-9]{2}`)

// Match pairs credits with the open payments, one proposal per credit in
// the credits' order. References are found in the structured field or
// anywhere in the free text, whatever the spacing or case; an open
// reference wins over a well-formed unknown one. Credits with the same
// reference add up: parts short of the amount are partial, and the credit
// that brings the sum (with Expected.PaidMinor) to the amount is exact.
// Credits without a usable reference are matched by amount only when the
// amount is unique among the open payments (not partly paid) and among
// those credits: when two orders are open for the same amount, a credit
// without a reference never completes either of them, it is listed for
// staff. The caller drops the credits it
// recorded before (by Credit.Key): Match sees one import at a time.
func Match(credits []Credit, open []Expected) []Proposal {
	byRef := make(map[Reference]int, len(open))
	for i, e := range open {
		byRef[Reference(compact(string(e.Reference)))] = i
	}
	// paidBy holds, per open payment, the ID of the credit that paid it
	// in full in this run; paid what its credits added up to so far.
	paidBy := make(map[int]string)
	paid := make(map[int]int64, len(open))
	for i, e := range open {
		paid[i] = e.PaidMinor
	}
	seen := make(map[string]bool, len(credits))
	out := make([]Proposal, len(credits))
	var noRef []int
	for ci, c := range credits {
		out[ci].Credit = c
		if seen[c.identity()] {
			out[ci].Outcome, out[ci].Reason = OutcomeDuplicate, fmt.Sprintf("credit %s is listed twice (overlapping statements?)", c.ID)
			continue
		}
		seen[c.identity()] = true
		idx, found, unknownRef := findReference(c, open, byRef)
		if !found {
			if unknownRef != "" {
				out[ci].Outcome, out[ci].Reference = OutcomeUnknown, unknownRef
				out[ci].Reason = fmt.Sprintf("reference %s is not an open payment (already paid, cancelled or not ours)", unknownRef.String())
				continue
			}
			noRef = append(noRef, ci)
			continue
		}
		e := open[idx]
		out[ci].Expected = &open[idx]
		switch {
		case paidBy[idx] != "":
			out[ci].Outcome, out[ci].Reason = OutcomeDuplicate, fmt.Sprintf("%s was already paid by credit %s", e.Reference.String(), paidBy[idx])
		case c.Currency != e.Currency:
			out[ci].Outcome, out[ci].Reason = OutcomeCurrency, fmt.Sprintf("paid %s, %s asks for %s", money(c.AmountMinor, c.Currency), e.Reference.String(), money(e.AmountMinor, e.Currency))
		case paid[idx]+c.AmountMinor == e.AmountMinor:
			paidBy[idx] = c.ID
			out[ci].Outcome, out[ci].Reason = OutcomeExact, fmt.Sprintf("reference %s and amount %s", e.Reference.String(), money(e.AmountMinor, e.Currency))
			if paid[idx] > 0 {
				out[ci].Reason = fmt.Sprintf("reference %s: %s completes %s with the %s paid before", e.Reference.String(),
					money(c.AmountMinor, c.Currency), money(e.AmountMinor, e.Currency), money(paid[idx], e.Currency))
			}
		case paid[idx]+c.AmountMinor < e.AmountMinor:
			paid[idx] += c.AmountMinor
			out[ci].Outcome, out[ci].Reason = OutcomePartial, fmt.Sprintf("paid %s of %s for %s (%s so far)", money(c.AmountMinor, c.Currency),
				money(e.AmountMinor, e.Currency), e.Reference.String(), money(paid[idx], e.Currency))
		default:
			out[ci].Outcome, out[ci].Reason = OutcomeExcess, fmt.Sprintf("paid %s for %s of %s", money(c.AmountMinor, c.Currency), e.Reference.String(), money(e.AmountMinor, e.Currency))
			if paid[idx] > 0 {
				out[ci].Reason += fmt.Sprintf(" (%s paid before)", money(paid[idx], e.Currency))
			}
		}
	}
	matchByAmount(out, noRef, open, paidBy)
	return out
}

// findReference looks for an open payment's reference in the credit: the
// structured references first, then the free text, letters and digits
// only so that spaces, dashes and line breaks inside it do not matter. The
// longest open reference found wins. Without one, unknownRef is a
// well-formed RF reference the credit carries, if any.
func findReference(c Credit, open []Expected, byRef map[Reference]int) (idx int, found bool, unknownRef Reference) {
	texts := make([]string, 0, len(c.References)+1)
	for _, r := range c.References {
		texts = append(texts, alnum(r))
	}
	texts = append(texts, alnum(c.Unstructured))
	for _, t := range texts {
		best := -1
		for i, e := range open {
			ref := compact(string(e.Reference))
			if ref != "" && strings.Contains(t, ref) && (best < 0 || len(ref) > len(compact(string(open[best].Reference)))) {
				best = i
			}
		}
		if best >= 0 {
			return best, true, ""
		}
	}
	for _, r := range c.References {
		if ref, err := ParseReference(alnum(r)); err == nil {
			return 0, false, ref
		}
	}
	if ref, ok := referenceInText(c.Unstructured); ok {
		return 0, false, ref
	}
	return 0, false, ""
}

// matchByAmount settles the credits without a usable reference: by
// amount when exactly one open payment has it, that payment is not paid in
// this run, and no other such credit has the same amount.
func matchByAmount(out []Proposal, noRef []int, open []Expected, paidBy map[int]string) {
	key := func(minor int64, currency string) string { return strconv.FormatInt(minor, 10) + " " + currency }
	openByAmount := map[string][]int{}
	for i, e := range open {
		if e.PaidMinor > 0 {
			continue // partly paid: only its reference tells a credit for the rest
		}
		k := key(e.AmountMinor, e.Currency)
		openByAmount[k] = append(openByAmount[k], i)
	}
	creditsByAmount := map[string]int{}
	for _, ci := range noRef {
		creditsByAmount[key(out[ci].Credit.AmountMinor, out[ci].Credit.Currency)]++
	}
	for _, ci := range noRef {
		c := out[ci].Credit
		k := key(c.AmountMinor, c.Currency)
		candidates := openByAmount[k]
		out[ci].Outcome = OutcomeUnknown
		switch {
		case len(candidates) == 0:
			out[ci].Reason = fmt.Sprintf("no open payment's reference, and no open payment of %s", money(c.AmountMinor, c.Currency))
		case len(candidates) > 1:
			out[ci].Reason = fmt.Sprintf("no open payment's reference, and %d open payments of %s", len(candidates), money(c.AmountMinor, c.Currency))
		case paidBy[candidates[0]] != "":
			out[ci].Reason = fmt.Sprintf("no open payment's reference; the one open payment of %s, %s, was paid by credit %s", money(c.AmountMinor, c.Currency), open[candidates[0]].Reference.String(), paidBy[candidates[0]])
		case creditsByAmount[k] > 1:
			out[ci].Reason = fmt.Sprintf("no open payment's reference, and %d such credits of %s for one open payment", creditsByAmount[k], money(c.AmountMinor, c.Currency))
		default:
			out[ci].Outcome = OutcomeByAmount
			out[ci].Expected = &open[candidates[0]]
			out[ci].Reason = fmt.Sprintf("no open payment's reference; %s is the only open payment of %s", open[candidates[0]].Reference.String(), money(c.AmountMinor, c.Currency))
		}
	}
}

// referenceInText finds a well-formed RF reference in free text: one word,
// or words printed in groups of four as ParseReference's String writes
// them. Only word boundaries are tried, so that a mangled reference is
// rarely mistaken for another valid one (any string has a 1 in 97 chance
// of valid check digits).
func referenceInText(text string) (Reference, bool) {
	words := strings.Fields(strings.ToUpper(text))
	for i := range words {
		words[i] = strings.Trim(words[i], ".,;:()[]/\\\"'")
	}
	for i, w := range words {
		if !strings.HasPrefix(w, "RF") {
			continue
		}
		var found Reference
		joined := ""
		for j := i; j < len(words) && len(joined)+len(words[j]) <= 25; j++ {
			joined += words[j]
			if rfStart.MatchString(joined) {
				if r, err := ParseReference(joined); err == nil {
					found = r
				}
			}
			if len(words[j]) != 4 {
				break // only the last group may be shorter
			}
		}
		if found != "" {
			return found, true
		}
	}
	return "", false
}

// alnum keeps the letters and digits of s, upper-cased.
func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// money writes an amount for the import's report, such as "EUR 184.50".
func money(minor int64, currency string) string {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	s := strconv.FormatInt(minor, 10)
	if digits == 0 {
		return currency + " " + sign + s
	}
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	return currency + " " + sign + s[:len(s)-digits] + "." + s[len(s)-digits:]
}

// identity is what tells a credit apart: its Key, or its ID for a credit
// not read from a file.
func (c Credit) identity() string {
	if c.Key != "" {
		return c.Key
	}
	return "id:" + c.ID
}
