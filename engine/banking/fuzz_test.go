package banking

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A statement is a file from outside: whatever it holds, parsing returns a
// statement or an error, never a panic, and every credit it returns is a
// booked credit with an id and a positive amount, and every return has
// an amount, a currency and a key.
func FuzzParseStatement(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.xml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<Document><BkToCstmrStmt><Stmt><Ntry><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><AcctSvcrRef>x</AcctSvcrRef></Ntry></Stmt></BkToCstmrStmt></Document>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStatement(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, c := range st.Credits {
			if c.ID == "" || c.AmountMinor < 0 || len(c.Currency) != 3 {
				t.Fatalf("credit %+v", c)
			}
		}
		for _, r := range st.Returns {
			if r.AmountMinor < 0 || r.ChargesMinor < 0 || len(r.Currency) != 3 || len(r.Key) != 64 {
				t.Fatalf("return %+v", r)
			}
		}
		Match(st.Credits, []Expected{{Reference: "RF18539007547034", AmountMinor: 100, Currency: "EUR"}})
	})
}

// Free text from a bank is arbitrary: finding references in it never panics.
func FuzzReferenceInText(f *testing.F) {
	for _, s := range []string{"RF18 5390 0754 7034", "rf18539007547034.", "RF", "RF1", "RF18 ", "Ä RF18 5390 0754 7034 ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, ok := referenceInText(s); ok {
			if _, err := ParseReference(string(r)); err != nil {
				t.Fatalf("referenceInText(%q) = %q, which does not parse: %v", s, r, err)
			}
		}
		Match([]Credit{{ID: "1", AmountMinor: 100, Currency: "EUR", Unstructured: s, References: []string{s}}},
			[]Expected{{Reference: "RF18539007547034", AmountMinor: 100, Currency: "EUR"}})
	})
}
