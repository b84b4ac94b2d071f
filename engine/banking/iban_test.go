package banking

import (
	"strings"
	"testing"
)

// The valid IBANs are the examples of the SWIFT IBAN registry and of the
// national standards; each wrong one breaks exactly one rule.
func TestParseIBAN(t *testing.T) {
	valid := []struct{ in, electronic, printed string }{
		{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "DE89 3704 0044 0532 0130 00"},
		{"gb82west12345698765432", "GB82WEST12345698765432", "GB82 WEST 1234 5698 7654 32"},
		{"CH9300762011623852957", "CH9300762011623852957", "CH93 0076 2011 6238 5295 7"},
		{"FR14 2004 1010 0505 0001 3M02 606", "FR1420041010050500013M02606", "FR14 2004 1010 0505 0001 3M02 606"},
		{"NL91ABNA0417164300", "NL91ABNA0417164300", "NL91 ABNA 0417 1643 00"},
		{"BE68539007547034", "BE68539007547034", "BE68 5390 0754 7034"},
		{"NO9386011117947", "NO9386011117947", "NO93 8601 1117 947"},
		{"AT611904300234573201", "AT611904300234573201", "AT61 1904 3002 3457 3201"},
		{"LI21088100002324013AA", "LI21088100002324013AA", "LI21 0881 0000 2324 013A A"},
		{"MT84MALT011000012345MTLCAST001S", "MT84MALT011000012345MTLCAST001S", "MT84 MALT 0110 0001 2345 MTLC AST0 01S"},
	}
	for _, tc := range valid {
		t.Run(tc.electronic, func(t *testing.T) {
			got, err := ParseIBAN(tc.in)
			if err != nil {
				t.Fatalf("ParseIBAN(%q): %v", tc.in, err)
			}
			if string(got) != tc.electronic || got.String() != tc.printed {
				t.Errorf("got %q printed %q, want %q printed %q", got, got.String(), tc.electronic, tc.printed)
			}
		})
	}
	invalid := []struct{ name, in, want string }{
		{"empty", "  ", "empty"},
		{"check digits", "DE88370400440532013000", "check digits"},
		{"swapped digits", "DE89370400440532031000", "check digits"},
		{"too short for DE", "DE8937040044053201300", "22 characters"},
		{"too long for NO", "NO93860111179470", "15 characters"},
		{"unknown country", "ZZ89370400440532013000", "has no IBAN"},
		{"punctuation", "DE89-3704-0044-0532-0130-00", "two letters"},
		{"letters as check digits", "DEAB370400440532013000", "two letters"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseIBAN(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseIBAN(%q) = %v, want an error about %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestQRIBAN(t *testing.T) {
	for in, want := range map[string]bool{
		"CH4431999123000889012":  true,  // SIX's QR-IBAN example (IID 31999)
		"CH9300762011623852957":  false, // an ordinary Swiss IBAN
		"DE89370400440532013000": false,
	} {
		iban, err := ParseIBAN(in)
		if err != nil {
			t.Fatalf("ParseIBAN(%q): %v", in, err)
		}
		if got := iban.IsQRIBAN(); got != want {
			t.Errorf("%s IsQRIBAN = %v, want %v", in, got, want)
		}
	}
}
