package banking

import "testing"

// The statement reader against files banks published (testdata/public).

func TestPublicCamt053Sample(t *testing.T) {
	st := parseFile(t, "public/fffs_camt053.xml")
	if st.Message != "camt.053.001.02" || st.MessageID != "BANKFILEID00001" {
		t.Fatalf("message %q %q", st.Message, st.MessageID)
	}
	mine := st.CreditsTo("FI74 3301 0001 2220 90")
	// ARCH04, ARCH21, ARCH05, ARCH06, ARCH07, ARCH08 are booked credits.
	if len(mine) != 6 {
		for _, c := range mine {
			t.Logf("%s %d %s", c.ID, c.AmountMinor, c.Currency)
		}
		t.Fatalf("%d credits, want 6", len(mine))
	}
	keys := map[string]string{}
	for _, c := range mine {
		if len(c.Key) != 64 {
			t.Fatalf("credit %s: key %q", c.ID, c.Key)
		}
		if other, dup := keys[c.Key]; dup {
			t.Fatalf("credits %s and %s share a key", other, c.ID)
		}
		keys[c.Key] = c.ID
	}
	// ARCH07 and ARCH08 pay the same RF reference: two credits, not one
	// listed twice.
	got := Match(mine, []Expected{{Reference: "RF98123456789012", AmountMinor: 1545500, Currency: "CHF"}})
	dups := 0
	for _, p := range got {
		if p.Outcome == OutcomeDuplicate && p.Expected == nil {
			dups++
		}
	}
	if dups != 0 {
		t.Fatalf("%d credits of the public sample taken for listed twice", dups)
	}
	// The same file read twice gives the same keys (re-import finds them).
	again := parseFile(t, "public/fffs_camt053.xml").CreditsTo("FI7433010001222090")
	for i := range again {
		if again[i].Key != mine[i].Key {
			t.Fatalf("key of %s changed between reads", mine[i].ID)
		}
	}
}

func TestPublicCamt052Sample(t *testing.T) {
	st := parseFile(t, "public/fffs_camt052.xml")
	if st.Message != "camt.052.001.02" {
		t.Fatalf("message %q", st.Message)
	}
	// One pending entry (skipped), one booked credit (ARCH08).
	if len(st.Credits) != 1 || st.Credits[0].ID != "091029ACCTSTMTARCH08" || st.Skipped != 1 {
		t.Fatalf("credits %+v, skipped %d", st.Credits, st.Skipped)
	}
	c := st.Credits[0]
	if c.AmountMinor != 10000 || c.Currency != "EUR" || len(c.References) != 1 || c.References[0] != "RF98123456789012" {
		t.Fatalf("credit %+v", c)
	}
}

func TestPublicCamt054Sample(t *testing.T) {
	st := parseFile(t, "public/fffs_camt054.xml")
	if st.Message != "camt.054.001.02" || len(st.Credits) == 0 {
		t.Fatalf("%+v", st)
	}
	seen := map[string]bool{}
	for _, c := range st.Credits {
		if seen[c.Key] {
			t.Fatalf("credit %s: key repeated", c.ID)
		}
		seen[c.Key] = true
	}
}

// PostFinance repeats one AcctSvcrRef on entries of other amounts, told
// apart by NtryRef: both are credits of their own.
func TestSharedAcctSvcrRefAreTwoCredits(t *testing.T) {
	st := parseFile(t, "postfinance_shared_acctsvcrref.xml")
	if len(st.Credits) != 2 || st.Credits[0].ID != st.Credits[1].ID {
		t.Fatalf("credits %+v", st.Credits)
	}
	if st.Credits[0].Key == st.Credits[1].Key {
		t.Fatal("two credits of different amounts share a key")
	}
	got := Match(st.Credits, []Expected{
		{Reference: "RF18539007547034", AmountMinor: 153700, Currency: "CHF"},
		{Reference: "RF712348231", AmountMinor: 169222, Currency: "CHF"},
	})
	for _, p := range got {
		if p.Outcome != OutcomeExact {
			t.Fatalf("%s %d: %s (%s)", p.Credit.ID, p.Credit.AmountMinor, p.Outcome, p.Reason)
		}
	}
}
