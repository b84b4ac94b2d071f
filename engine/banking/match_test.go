package banking

import (
	"strings"
	"testing"
)

// fixtureOpen are the payments the camt053_v02.xml fixture is written against.
var fixtureOpen = []Expected{
	{Reference: "RF48PRALPHA2345ALPHA234", AmountMinor: 18450, Currency: "EUR"},
	{Reference: "RF32PRBRAVO2345BRAVO234", AmountMinor: 6000, Currency: "EUR"},
	{Reference: "RF59PRCHARL2345CHARL234", AmountMinor: 7525, Currency: "EUR"},
	{Reference: "RF38PRDELTA2345DELTA234", AmountMinor: 12000, Currency: "EUR"},
	{Reference: "RF65PRECHOO2345ECHOO234", AmountMinor: 5000, Currency: "EUR"},
	{Reference: "RF57PRFOXTR2345FOXTR234", AmountMinor: 3000, Currency: "EUR"},
	{Reference: "RF72PRGOLFF2345GOLFF234", AmountMinor: 3000, Currency: "EUR"},
}

func TestMatchFixtureStatement(t *testing.T) {
	st := parseFile(t, "camt053_v02.xml")
	got := Match(st.Credits, fixtureOpen)
	want := []struct {
		credit  string
		outcome Outcome
		ref     Reference // "": no payment
		reason  string
	}{
		{"2026110300001", OutcomeExact, "RF48PRALPHA2345ALPHA234", "amount EUR 184.50"},
		{"2026110400002", OutcomeExact, "RF32PRBRAVO2345BRAVO234", "reference RF32"},
		{"2026110600003", OutcomeByAmount, "RF59PRCHARL2345CHARL234", "only open payment of EUR 75.25"},
		{"2026110700004", OutcomeUnknown, "", "RF35 PRUN KNO2 345U NKNO 234 is not an open payment"},
		{"2026111000007/1", OutcomePartial, "RF38PRDELTA2345DELTA234", "paid EUR 100.00 of EUR 120.00"},
		{"2026111000007/2", OutcomeExcess, "RF65PRECHOO2345ECHOO234", "paid EUR 55.00 for RF65"},
		{"2026111200008", OutcomeUnknown, "", "2 open payments of EUR 30.00"},
		{"2026111400009", OutcomeDuplicate, "RF48PRALPHA2345ALPHA234", "already paid by credit 2026110300001"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d proposals, want %d", len(got), len(want))
	}
	for i, w := range want {
		p := got[i]
		var ref Reference
		if p.Expected != nil {
			ref = p.Expected.Reference
		}
		if p.Credit.ID != w.credit || p.Outcome != w.outcome || ref != w.ref || !strings.Contains(p.Reason, w.reason) {
			t.Errorf("proposal %d: %s %s %q (%s); want %s %s %q (… %s …)", i, p.Credit.ID, p.Outcome, ref, p.Reason, w.credit, w.outcome, w.ref, w.reason)
		}
	}
}

func TestMatchCamt054(t *testing.T) {
	st := parseFile(t, "camt054_v04.xml")
	got := Match(st.Credits, []Expected{{Reference: "RF97PRHOTEL2345HOTEL234", AmountMinor: 9000, Currency: "EUR"}})
	if len(got) != 1 || got[0].Outcome != OutcomeExact {
		t.Fatalf("%+v", got)
	}
}

func credit(id string, minor int64, ccy, ref, text string) Credit {
	c := Credit{ID: id, AmountMinor: minor, Currency: ccy, Unstructured: text}
	if ref != "" {
		c.References = []string{ref}
	}
	return c
}

func TestMatchRules(t *testing.T) {
	a := Expected{Reference: "RF18539007547034", AmountMinor: 5000, Currency: "EUR"}
	b := Expected{Reference: "RF712348231", AmountMinor: 2500, Currency: "CHF"}
	for _, tc := range []struct {
		name    string
		credits []Credit
		want    []Outcome
		reason  string // of the last proposal
	}{
		{"structured, spaced and lower case", []Credit{credit("1", 5000, "EUR", "rf18 5390 0754 7034", "")}, []Outcome{OutcomeExact}, "reference"},
		{"inside free text with punctuation", []Credit{credit("1", 5000, "EUR", "", "Beitrag (RF18-5390-0754-7034), danke")}, []Outcome{OutcomeExact}, ""},
		{"open reference wins over an unknown one", []Credit{credit("1", 5000, "EUR", "RF712348232", "RF18539007547034")}, []Outcome{OutcomeExact}, ""},
		{"other currency", []Credit{credit("1", 2500, "EUR", "RF712348231", "")}, []Outcome{OutcomeCurrency}, "CHF 25.00"},
		{"same credit listed twice", []Credit{credit("1", 5000, "EUR", "RF18539007547034", ""), credit("1", 5000, "EUR", "RF18539007547034", "")}, []Outcome{OutcomeExact, OutcomeDuplicate}, "listed twice"},
		{"amount of a payment paid by reference", []Credit{credit("1", 5000, "EUR", "RF18539007547034", ""), credit("2", 5000, "EUR", "", "Mitgliedsbeitrag")}, []Outcome{OutcomeExact, OutcomeUnknown}, "was paid by credit 1"},
		{"two credits without reference, one payment of that amount", []Credit{credit("1", 2500, "CHF", "", "a"), credit("2", 2500, "CHF", "", "b")}, []Outcome{OutcomeUnknown, OutcomeUnknown}, "2 such credits"},
		{"amount matches nothing", []Credit{credit("1", 4999, "EUR", "", "")}, []Outcome{OutcomeUnknown}, "no open payment of EUR 49.99"},
		{"amount in another currency", []Credit{credit("1", 2500, "EUR", "", "")}, []Outcome{OutcomeUnknown}, "no open payment of EUR 25.00"},
		{"mangled, amount unique", []Credit{credit("1", 2500, "CHF", "RF712348213", "")}, []Outcome{OutcomeByAmount}, "only open payment of CHF 25.00"},
		{"unknown valid reference in free text groups", []Credit{credit("1", 2500, "CHF", "", "Ref RF04 0000 0000 0000 0000 0000 0 thanks")}, []Outcome{OutcomeUnknown}, "not an open payment"},
		{"a partial payment then the rest", []Credit{credit("1", 2000, "EUR", "RF18539007547034", ""), credit("2", 3000, "EUR", "RF18539007547034", "")}, []Outcome{OutcomePartial, OutcomeExact}, "EUR 30.00 completes EUR 50.00 with the EUR 20.00 paid before"},
		{"three parts, the last one too much", []Credit{credit("1", 2000, "EUR", "RF18539007547034", ""), credit("2", 1000, "EUR", "RF18539007547034", ""), credit("3", 2500, "EUR", "RF18539007547034", "")}, []Outcome{OutcomePartial, OutcomePartial, OutcomeExcess}, "EUR 30.00 paid before"},
		{"paid after completion by parts", []Credit{credit("1", 2000, "EUR", "RF18539007547034", ""), credit("2", 3000, "EUR", "RF18539007547034", ""), credit("3", 10, "EUR", "RF18539007547034", "")}, []Outcome{OutcomePartial, OutcomeExact, OutcomeDuplicate}, "already paid by credit 2"},
		{"parts of two payments do not mix", []Credit{credit("1", 2000, "EUR", "RF18539007547034", ""), credit("2", 500, "CHF", "RF712348231", ""), credit("3", 2000, "CHF", "RF712348231", "")}, []Outcome{OutcomePartial, OutcomePartial, OutcomeExact}, "CHF 20.00 completes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Match(tc.credits, []Expected{a, b})
			if len(got) != len(tc.want) {
				t.Fatalf("%d proposals, want %d", len(got), len(tc.want))
			}
			for i, p := range got {
				if p.Outcome != tc.want[i] {
					t.Errorf("proposal %d: %s (%s), want %s", i, p.Outcome, p.Reason, tc.want[i])
				}
			}
			if last := got[len(got)-1]; !strings.Contains(last.Reason, tc.reason) {
				t.Errorf("reason %q, want it to mention %q", last.Reason, tc.reason)
			}
		})
	}
}

func TestReferenceInText(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Reference
	}{
		{"RF18 5390 0754 7034", "RF18539007547034"},
		{"zahlung rf18539007547034.", "RF18539007547034"},
		{"RF18 5390 0754 7034 RF99", "RF18539007547034"},
		{"RF18 5390 0754 7035", ""},
		{"Beitrag 2027", ""},
	} {
		got, ok := referenceInText(tc.text)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("referenceInText(%q) = %q, %v; want %q", tc.text, got, ok, tc.want)
		}
	}
}

// TestMatchAddsToEarlierParts: a payment partly paid by an earlier
// statement (Expected.PaidMinor) is completed by the credit for the rest,
// and is never matched by amount alone.
func TestMatchAddsToEarlierParts(t *testing.T) {
	a := Expected{Reference: "RF18539007547034", AmountMinor: 5000, Currency: "EUR", PaidMinor: 2000}
	got := Match([]Credit{credit("1", 3000, "EUR", "RF18539007547034", "")}, []Expected{a})
	if got[0].Outcome != OutcomeExact || !strings.Contains(got[0].Reason, "with the EUR 20.00 paid before") {
		t.Errorf("the rest of a partly paid payment: %s (%s)", got[0].Outcome, got[0].Reason)
	}
	got = Match([]Credit{credit("1", 5000, "EUR", "", "Beitrag"), credit("2", 3000, "EUR", "", "Rest")}, []Expected{a})
	for i, p := range got {
		if p.Outcome != OutcomeUnknown {
			t.Errorf("credit %d without a reference matched a partly paid payment by amount: %s (%s)", i, p.Outcome, p.Reason)
		}
	}
}

// TestMatchByAmountNeedsOneOpenPayment: a credit without a usable
// reference never completes a registration when more than one order is
// open for its amount; with exactly one it is proposed by amount.
func TestMatchByAmountNeedsOneOpenPayment(t *testing.T) {
	one := Expected{Reference: "RF18539007547034", AmountMinor: 5000, Currency: "EUR"}
	two := Expected{Reference: "RF712348231", AmountMinor: 5000, Currency: "EUR"}
	c := credit("1", 5000, "EUR", "", "Mitgliedsbeitrag Familie Muster")
	if got := Match([]Credit{c}, []Expected{one, two}); got[0].Outcome != OutcomeUnknown || got[0].Expected != nil || !strings.Contains(got[0].Reason, "2 open payments") {
		t.Errorf("two open orders of the amount: %s %v (%s)", got[0].Outcome, got[0].Expected, got[0].Reason)
	}
	if got := Match([]Credit{c}, []Expected{one}); got[0].Outcome != OutcomeByAmount || got[0].Expected == nil || got[0].Expected.Reference != one.Reference {
		t.Errorf("one open order of the amount: %s (%s)", got[0].Outcome, got[0].Reason)
	}
}
