package banking

import (
	"os"
	"strings"
	"testing"
	"time"
)

func parseFile(t *testing.T, name string) Statement {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := ParseStatement(f)
	if err != nil {
		t.Fatalf("ParseStatement(%s): %v", name, err)
	}
	return st
}

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestParseCamt053V02(t *testing.T) {
	st := parseFile(t, "camt053_v02.xml")
	if st.Message != "camt.053.001.02" || st.MessageID != "STMT-2026-11-0001" {
		t.Fatalf("message %q id %q", st.Message, st.MessageID)
	}
	// Debit, pending credit and reversal are skipped; the batch gives two credits.
	if st.Skipped != 3 {
		t.Errorf("skipped %d entries, want 3", st.Skipped)
	}
	type row struct {
		id     string
		minor  int64
		refs   string
		ustrd  string
		debtor string
	}
	want := []row{
		{"2026110300001", 18450, "RF48PRALPHA2345ALPHA234", "", "Anna Muster"},
		{"2026110400002", 6000, "", "Mitgliedsbeitrag 2027 rf32 prbr avo2 345b ravo 234 danke", "Bernd Beispiel"},
		{"2026110600003", 7525, "", "RF59 PRCH ARL2 345C HARL 243", "Carla Chor"},
		{"2026110700004", 18450, "RF35PRUNKNO2345UNKNO234", "", "Udo Unbekannt"},
		{"2026111000007/1", 10000, "RF38 PRDE LTA2 345D ELTA 234", "", "Dora Delta"},
		{"2026111000007/2", 5500, "RF65PRECHOO2345ECHOO234", "", "Emil Echo"},
		{"2026111200008", 3000, "", "Beitrag Gabi", "Gabi Golf"},
		{"2026111400009", 18450, "RF48PRALPHA2345ALPHA234", "", "Anna Muster"},
	}
	if len(st.Credits) != len(want) {
		t.Fatalf("%d credits, want %d: %+v", len(st.Credits), len(want), st.Credits)
	}
	for i, w := range want {
		c := st.Credits[i]
		got := row{c.ID, c.AmountMinor, strings.Join(c.References, "|"), c.Unstructured, c.DebtorName}
		if got != w {
			t.Errorf("credit %d:\n got %+v\nwant %+v", i, got, w)
		}
		if c.Currency != "EUR" || c.Account != "DE89370400440532013000" {
			t.Errorf("credit %d: currency %q account %q", i, c.Currency, c.Account)
		}
	}
	if c := st.Credits[0]; c.DebtorIBAN != "DE02120300000000202051" {
		t.Errorf("debtor IBAN %q", c.DebtorIBAN)
	}
	if c := st.Credits[1]; !c.BookingDate.Equal(day("2026-11-04")) || !c.ValueDate.Equal(day("2026-11-05")) {
		t.Errorf("dates %v %v", c.BookingDate, c.ValueDate)
	}
}

func TestParseCamt053V08(t *testing.T) {
	st := parseFile(t, "camt053_v08.xml")
	if st.Message != "camt.053.001.08" || st.Skipped != 1 || len(st.Credits) != 3 {
		t.Fatalf("message %q, skipped %d, credits %+v", st.Message, st.Skipped, st.Credits)
	}
	c := st.Credits[0]
	if c.ID != "ZKB-TX-1" || c.AmountMinor != 199995 || c.Currency != "CHF" || c.DebtorName != "Pia Muster" ||
		c.Account != "CH9300762011623852957" || strings.Join(c.References, "") != "RF18539007547034" {
		t.Fatalf("credit %+v", c)
	}
	if want := time.Date(2026, 11, 21, 8, 15, 0, 0, time.UTC); !c.BookingDate.Equal(want) {
		t.Errorf("booking time %v, want %v", c.BookingDate, want)
	}
	if c := st.Credits[1]; c.ID != "ZKB-ENTRY-3" || c.Unstructured != "GUTSCHRIFT RF71 2348 231 MUSTER" || c.AmountMinor != 4500 {
		t.Errorf("entry without details: %+v", c)
	}
	mine := st.CreditsTo("ch93 0076 2011 6238 5295 7")
	if len(mine) != 2 || mine[0].ID != "ZKB-TX-1" || mine[1].ID != "ZKB-ENTRY-3" {
		t.Errorf("CreditsTo the current account: %+v", mine)
	}
	if savings := st.CreditsTo("CH5604835012345678009"); len(savings) != 1 || savings[0].ID != "ZKB-SAVINGS-1" {
		t.Errorf("CreditsTo the savings account: %+v", savings)
	}
	got := Match(mine, []Expected{{Reference: "RF712348231", AmountMinor: 4500, Currency: "CHF"}})
	if got[0].Outcome != OutcomeUnknown || got[1].Outcome != OutcomeExact {
		t.Errorf("match: %s (%s), %s (%s)", got[0].Outcome, got[0].Reason, got[1].Outcome, got[1].Reason)
	}
}

func TestParseCamt054(t *testing.T) {
	st := parseFile(t, "camt054_v04.xml")
	if st.Message != "camt.054.001.04" || st.MessageID != "NTF-2026-11-22-0042" || len(st.Credits) != 1 {
		t.Fatalf("%+v", st)
	}
	if c := st.Credits[0]; c.ID != "NTF42-1" || c.AmountMinor != 9000 || c.References[0] != "RF97PRHOTEL2345HOTEL234" {
		t.Fatalf("credit %+v", c)
	}
}

func TestParseStatementRejects(t *testing.T) {
	const entry = `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2026-11-01</Dt></BookgDt><AcctSvcrRef>%s</AcctSvcrRef></Ntry>`
	doc := func(ns, body string) string {
		return `<?xml version="1.0"?><Document xmlns="` + ns + `"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId></GrpHdr><Stmt>` + body + `</Stmt></BkToCstmrStmt></Document>`
	}
	ns := "urn:iso:std:iso:20022:tech:xsd:camt.053.001.04"
	for _, tc := range []struct{ name, xml, want string }{
		{"not XML", "hello", "BkToCstmrStmt or"},
		{"truncated", doc(ns, "")[:80], "not well-formed"},
		{"pain.001", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03"><CstmrCdtTrfInitn/></Document>`, "not a camt.052 report, camt.053 statement"},
		{"not a Document", `<Statement/>`, "not an ISO 20022 Document"},
		{"namespace and element disagree", doc("urn:iso:std:iso:20022:tech:xsd:camt.054.001.04", ""), "does not match"},
		{"version 01", doc("urn:iso:std:iso:20022:tech:xsd:camt.053.001.01", ""), "not supported"},
		{"comma decimal", doc(ns, strings.ReplaceAll(strings.ReplaceAll(entry, "%s", "X"), ">X</Amt>", ">12,50</Amt>")), "not a decimal"},
		{"three decimals in EUR", doc(ns, strings.Replace(strings.Replace(entry, "%s", "12.505", 1), "%s", "R1", 1)), "more decimals"},
		{"no servicer reference", doc(ns, strings.Replace(strings.Replace(entry, "%s", "12.50", 1), "%s", "", 1)), "no account servicer reference"},
		{"bad date", doc(ns, strings.Replace(strings.Replace(strings.Replace(entry, "%s", "1", 1), "%s", "R", 1), "2026-11-01", "01.11.2026", 1)), "booking date"},
		{"latin-2", `<?xml version="1.0" encoding="ISO-8859-2"?>` + doc(ns, "")[21:], "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStatement(strings.NewReader(tc.xml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseStatement = %v, want an error about %q", err, tc.want)
			}
		})
	}
	// No namespace at all, Latin-1 declared, and the amount's trailing zero: read.
	latin := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><Document><BkToCstmrStmt><Stmt>" +
		strings.Replace(strings.Replace(entry, "%s", "12.50", 1), "%s", "R\xe41", 1) + "</Stmt></BkToCstmrStmt></Document>"
	st, err := ParseStatement(strings.NewReader(latin))
	if err != nil || st.Message != "camt.053" || len(st.Credits) != 1 || st.Credits[0].ID != "Rä1" || st.Credits[0].AmountMinor != 1250 {
		t.Fatalf("Latin-1 without namespace: %+v, %v", st, err)
	}
}

func TestParseMinor(t *testing.T) {
	for _, tc := range []struct {
		in, ccy string
		want    int64
	}{
		{"184.5", "EUR", 18450}, {"184.50", "EUR", 18450}, {"0.01", "CHF", 1}, {"7", "EUR", 700},
		{"1500", "JPY", 1500}, {"1.234", "KWD", 1234}, {"12.000", "EUR", 1200},
	} {
		if got, err := parseMinor(tc.in, tc.ccy); err != nil || got != tc.want {
			t.Errorf("parseMinor(%q, %s) = %d, %v; want %d", tc.in, tc.ccy, got, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"-1.00", "EUR"}, {"1.5", "JPY"}, {"1.00", ""}, {"1.00", "eur"}, {"1e3", "EUR"}} {
		if got, err := parseMinor(bad[0], bad[1]); err == nil {
			t.Errorf("parseMinor(%q, %q) = %d, want an error", bad[0], bad[1], got)
		}
	}
}
