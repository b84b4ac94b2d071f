package banking

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// RF18539007547034 and RF712348231 are the examples of ISO 11649 and of
// the EPC's guidance; the wrong ones change one character.
func TestParseReference(t *testing.T) {
	for _, tc := range []struct{ in, electronic, printed string }{
		{"RF18 5390 0754 7034", "RF18539007547034", "RF18 5390 0754 7034"},
		{"rf18539007547034", "RF18539007547034", "RF18 5390 0754 7034"},
		{"RF712348231", "RF712348231", "RF71 2348 231"},
	} {
		got, err := ParseReference(tc.in)
		if err != nil {
			t.Fatalf("ParseReference(%q): %v", tc.in, err)
		}
		if string(got) != tc.electronic || got.String() != tc.printed {
			t.Errorf("ParseReference(%q) = %q printed %q, want %q printed %q", tc.in, got, got.String(), tc.electronic, tc.printed)
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"check digits", "RF19539007547034", "check digits"},
		{"typo in body", "RF18539007547035", "check digits"},
		{"no RF", "XX18539007547034", "must be RF"},
		{"body too long", "RF18" + strings.Repeat("1", 22), "must be RF"},
		{"empty body", "RF18", "must be RF"},
		{"punctuation", "RF18-5390-0754-7034", "must be RF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseReference(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseReference(%q) = %v, want an error about %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestCreditorReference(t *testing.T) {
	// The ISO example's body yields the ISO example's check digits.
	if got, err := CreditorReference("539007547034"); err != nil || got != "RF18539007547034" {
		t.Fatalf("CreditorReference(539007547034) = %q, %v; want RF18539007547034", got, err)
	}
	a, err := CreditorReference("PR-MFRGGZDFMZTWQ2LK")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 22 || !strings.HasSuffix(string(a), "PRMFRGGZDFMZTWQ2LK") {
		t.Fatalf("CreditorReference = %q, want RF, two check digits and PRMFRGGZDFMZTWQ2LK", a)
	}
	// Deterministic, valid, and different identifiers give different references.
	again, _ := CreditorReference("PR-MFRGGZDFMZTWQ2LK")
	other, _ := CreditorReference("PR-MFRGGZDFMZTWQ2LL")
	if a != again || a == other {
		t.Fatalf("references %q, %q, %q: want the first two equal and the third different", a, again, other)
	}
	for _, r := range []Reference{a, other} {
		if _, err := ParseReference(string(r)); err != nil {
			t.Errorf("derived %q does not parse: %v", r, err)
		}
	}
	seen := map[Reference]int{}
	for id := range 10000 {
		r, err := CreditorReference(strconv.Itoa(id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseReference(string(r)); err != nil {
			t.Fatalf("derived %q does not parse: %v", r, err)
		}
		seen[r]++
	}
	if len(seen) != 10000 {
		t.Fatalf("10000 ids gave %d distinct references", len(seen))
	}
	for _, bad := range []string{"", "---", "PR-ÄBC", strings.Repeat("A", 22), "a+b"} {
		if r, err := CreditorReference(bad); err == nil {
			t.Errorf("CreditorReference(%q) = %q, want an error", bad, r)
		}
	}
}

// TestReferenceCheckDigitsOutOfRange: a reference whose check digits are
// 97 also sums right with 00 in their place; 00, 01 and 99 are never
// check digits, so they are refused whatever the body.
func TestReferenceCheckDigitsOutOfRange(t *testing.T) {
	for _, id := range []string{"PR-POUU5B45WAAL7NK5A4", "1", "ABC", "PR-ZDAZJG3LDZDMTSQR"} {
		rf, err := CreditorReference(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, cd := range []string{"00", "01", "99"} {
			if _, err := ParseReference("RF" + cd + string(rf)[4:]); err == nil {
				t.Errorf("RF%s%s accepted", cd, string(rf)[4:])
			}
		}
	}
	// A body whose check digits are 97 passes the sum with 00 as well.
	for i := 0; ; i++ {
		rf, _ := CreditorReference(fmt.Sprint("X", i))
		if string(rf)[2:4] == "97" {
			if mod97(string(rf)[4:]+"RF00") != 1 {
				t.Fatalf("%s: the sum with 00 does not hold, the test's premise is wrong", rf)
			}
			if _, err := ParseReference("RF00" + string(rf)[4:]); err == nil {
				t.Fatalf("RF00%s accepted", string(rf)[4:])
			}
			break
		}
	}
}
