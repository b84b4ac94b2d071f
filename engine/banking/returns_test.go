package banking

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The returns fixtures are valid documents of the official camt schemas,
// so the reader is tested against what a bank may really send.
func TestReturnFixturesValidateAgainstISOSchema(t *testing.T) {
	for file, xsd := range map[string]string{
		"camt053_v08_returns.xml": "camt.053.001.08.xsd",
		"camt054_v08_returns.xml": "camt.054.001.08.xsd",
	} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if msg := validateXSD(t, xsd, b); msg != "" {
			t.Errorf("%s does not validate against %s:\n%s", file, xsd, msg)
		}
		// The check can fail: a return without its mandatory amount does not validate.
		broken := strings.Replace(string(b), `<Amt Ccy="EUR">`, `<Amt>`, 1)
		if msg := validateXSD(t, xsd, []byte(broken)); msg == "" {
			t.Errorf("%s validated without a currency", file)
		}
	}
}

func TestParseStatementReadsReturnedDebits(t *testing.T) {
	const club = "DE89370400440532013000"
	type want struct {
		e2e, mandate    string
		cents, charges  int64
		reason, text    string
		booked, bankRef string
	}
	cases := []struct {
		file    string
		message string
		credits int
		skipped int
		returns []want
	}{
		{"camt053_v08_returns.xml", "camt.053.001.08", 1, 1, []want{ // returns are not skipped
			{"ORDER-102", "TVJ-102", 4550, 300, "MD06", "Erstattung auf Verlangen des Zahlers", "2026-12-18", "2026121800007"},
			{"ORDER-103", "TVJ-90", 9999, 0, "AC04", "", "2026-12-19", "2026121900003/1"},
			{"ORDER-106", "TVJ-91", 3000, 0, "AM04", "", "2026-12-19", "2026121900003/2"},
		}},
		{"camt054_v08_returns.xml", "camt.054.001.08", 0, 1, []want{
			{"ORDER-105", "TVJ-105", 250000, 0, "AC06", "Konto gesperrt", "2026-12-22", "NTF-7781"},
			{"ORDER-104", "", 1, 0, "", "Widerspruch durch Zahlungspflichtigen", "2026-12-22", "N-0002"},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			st := parseFile(t, c.file)
			if st.Message != c.message || len(st.Credits) != c.credits || st.Skipped != c.skipped {
				t.Errorf("%s: %d credits, %d skipped; want %s, %d, %d", st.Message, len(st.Credits), st.Skipped, c.message, c.credits, c.skipped)
			}
			if len(st.Returns) != len(c.returns) {
				t.Fatalf("%d returns, want %d: %+v", len(st.Returns), len(c.returns), st.Returns)
			}
			keys := map[string]bool{}
			for i, w := range c.returns {
				r := st.Returns[i]
				got := want{r.EndToEndID, r.MandateID, r.AmountMinor, r.ChargesMinor, r.ReasonCode, r.ReasonText, r.BookingDate.Format(time.DateOnly), r.BankReference}
				if got != w {
					t.Errorf("return %d:\n got %+v\nwant %+v", i+1, got, w)
				}
				if r.Currency != "EUR" || r.Account != club || len(r.Key) != 64 || keys[r.Key] {
					t.Errorf("return %d: currency %q account %q key %q", i+1, r.Currency, r.Account, r.Key)
				}
				keys[r.Key] = true
			}
		})
	}
}

// The same return read twice has the same key, and a credit with the same
// references does not share it.
func TestReturnKeyIsStable(t *testing.T) {
	a := parseFile(t, "camt053_v08_returns.xml")
	b := parseFile(t, "camt053_v08_returns.xml")
	for i := range a.Returns {
		if a.Returns[i].Key != b.Returns[i].Key {
			t.Fatalf("return %d: key changed", i+1)
		}
	}
	for _, c := range a.Credits {
		for _, r := range a.Returns {
			if c.Key == r.Key {
				t.Fatalf("credit and return share key %s", c.Key)
			}
		}
	}
}

// Credits still read as before from a statement that also holds returns.
func TestParseStatementCreditsBesideReturns(t *testing.T) {
	st := parseFile(t, "camt053_v08_returns.xml")
	if len(st.Credits) != 1 {
		t.Fatalf("%d credits", len(st.Credits))
	}
	c := st.Credits[0]
	if c.ID != "2026121500001" || c.AmountMinor != 279550 || c.Unstructured != "SEPA-Sammellastschrift RUN-2026-11-27-1" {
		t.Errorf("credit %+v", c)
	}
}

func TestReturnReasonText(t *testing.T) {
	codes := []string{"AC01", "AC04", "AC06", "AG01", "AG02", "AM04", "AM05", "BE05", "FF01", "MD01", "MD02", "MD06", "MD07", "MS02", "MS03", "RC01", "RR01", "RR02", "RR03", "RR04", "SL01"}
	for _, code := range codes {
		en, de, fr := ReturnReasonText(code, "en"), ReturnReasonText(code, "de"), ReturnReasonText(code, "fr")
		if en == "" || de == "" || fr == "" || en == de || en == fr || strings.Contains(en, code) {
			t.Errorf("%s: %q / %q / %q", code, en, de, fr)
		}
	}
	if got := ReturnReasonText(" md06 ", "de"); got != "der Kontoinhaber hat die Lastschrift zurückgefordert" {
		t.Errorf("MD06 de: %q", got)
	}
	if got := ReturnReasonText("AM04", "it"); got != ReturnReasonText("AM04", "en") {
		t.Errorf("unknown language: %q", got)
	}
	if got := ReturnReasonText("ZZ99", "fr"); !strings.Contains(got, "ZZ99") {
		t.Errorf("unknown code: %q", got)
	}
	if got := ReturnReasonText("", "en"); got != "the bank returned the direct debit" {
		t.Errorf("no code: %q", got)
	}
	if len(ReturnReasonCodes()) < len(codes) {
		t.Errorf("ReturnReasonCodes: %v", ReturnReasonCodes())
	}
}

func TestEndsMandate(t *testing.T) {
	for _, code := range ReturnReasonCodes() {
		want := code == "AC04" || code == "AC06" || code == "MD01"
		if EndsMandate(code) != want {
			t.Errorf("EndsMandate(%s) = %v", code, !want)
		}
	}
	if !EndsMandate(" md01") || EndsMandate("") {
		t.Error("EndsMandate trims and upper-cases, and no code ends nothing")
	}
}

// Which debit entries are returns: by return information or by bank
// transaction code, never a direct debit the club pays itself.
func TestParseStatementTellsReturnsFromOtherDebits(t *testing.T) {
	entry := func(code, rtrInf string) string {
		return `<Ntry><Amt Ccy="EUR">10.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
<BookgDt><Dt>2026-12-01</Dt></BookgDt><AcctSvcrRef>R1</AcctSvcrRef>` + code + `
<NtryDtls><TxDtls><Refs><EndToEndId>E1</EndToEndId></Refs>` + rtrInf + `</TxDtls></NtryDtls></Ntry>`
	}
	code := func(fmly, sub string) string {
		return `<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>` + fmly + `</Cd><SubFmlyCd>` + sub + `</SubFmlyCd></Fmly></Domn></BkTxCd>`
	}
	cases := []struct {
		name     string
		entry    string
		isReturn bool
	}{
		{"IDDT/UPDD", entry(code("IDDT", "UPDD"), ""), true},
		{"IDDT/PRDD", entry(code("IDDT", "PRDD"), ""), true},
		{"RDDT/UPDD", entry(code("RDDT", "UPDD"), ""), true},
		{"RtrInf only", entry("", `<RtrInf><Rsn><Cd>MS02</Cd></Rsn></RtrInf>`), true},
		{"the club's own direct debit", entry(code("RDDT", "ESDD"), ""), false},
		{"a transfer out", entry(code("ICDT", "ESCT"), ""), false},
		{"no code", entry("", ""), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>
<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>` + c.entry + `</Stmt></BkToCstmrStmt></Document>`
			st, err := ParseStatement(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			// A return is counted as a return, any other debit as skipped.
			skipped := 1
			if c.isReturn {
				skipped = 0
			}
			if got := len(st.Returns) == 1; got != c.isReturn || st.Skipped != skipped || len(st.Credits) != 0 {
				t.Errorf("returns %+v, skipped %d; want a return: %v", st.Returns, st.Skipped, c.isReturn)
			}
		})
	}
}
