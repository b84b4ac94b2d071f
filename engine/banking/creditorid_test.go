package banking

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseCreditorID(t *testing.T) {
	valid := []struct{ in, want string }{
		{"DE98ZZZ09999999999", "DE98ZZZ09999999999"},     // Deutsche Bundesbank's test identifier
		{"de98 zzz0 9999 9999 99", "DE98ZZZ09999999999"}, // as people write it
		{"DE98ABC09999999999", "DE98ABC09999999999"},     // the business code is not in the check
		{"AT61ZZZ01234567890", "AT61ZZZ01234567890"},     // EPC262-08 examples
		{"FR72ZZZ123456", "FR72ZZZ123456"},               //
		{"ES50ZZZM23456789", "ES50ZZZM23456789"},         //
		{"IT66ZZZA1B2C3D4E5F6G7H8", "IT66ZZZA1B2C3D4E5F6G7H8"},
		{"BE69ZZZ050D000000008", "BE69ZZZ050D000000008"},
		{"LU27ZZZ0000000000123456789", "LU27ZZZ0000000000123456789"},
		{"CH13ZZZ00000012345", "CH13ZZZ00000012345"},
	}
	for _, c := range valid {
		got, err := ParseCreditorID(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCreditorID(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	invalid := []struct{ in, want string }{
		{"", "empty"},
		{"DE97ZZZ09999999999", "check digits do not match"},
		{"DE98ZZZ09999999998", "check digits do not match"},
		{"DE98ZZZ0999999999", "DE identifiers have 18 characters, this one has 17"},
		{"US98ZZZ09999999999", "US is not a SEPA country"},
		{"DEXXZZZ09999999999", "two check digits"},
		{"DE98ZZ", "two check digits"},
		{"DE98ZZZ0999-999999", "two check digits"},
		{"DE98ZZZ" + strings.Repeat("1", 30), "longer than 35"},
	}
	for _, c := range invalid {
		got, err := ParseCreditorID(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCreditorID(%q) = %q, %v; want an error saying %q", c.in, got, err, c.want)
		}
	}
	// The check digits helper and the parser agree.
	ci := "FR" + creditorIDCheckDigits("FR", "123456") + "ABC123456"
	if _, err := ParseCreditorID(ci); err != nil {
		t.Errorf("computed %s: %v", ci, err)
	}
}

func TestCheckMandateReference(t *testing.T) {
	for _, ok := range []string{"A", "TVJ-101", "abc/def", "a b", "x?:().,'+-1", strings.Repeat("9", 35)} {
		if err := CheckMandateReference(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"   ", "only spaces"},
		{strings.Repeat("9", 36), "longer than 35"},
		{"TVJ_1", "contains '_'"},
		{"MÜ-1", "contains 'Ü'"},
		{"A&B", "contains '&'"},
		{"/A", "must not start or end with '/'"},
		{"A/", "must not start or end with '/'"},
		{"A//B", "'//'"},
	} {
		err := CheckMandateReference(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckMandateReference(%q) = %v; want an error saying %q", c.in, err, c.want)
		}
	}
}

func TestMandateReference(t *testing.T) {
	cases := []struct {
		prefix string
		id     int64
		want   string
	}{
		{"TVJ", 42, "TVJ-42"},
		{"TV Jahn München!", 42, "TVJAHNMUNCHEN-42"},
		{"", 7, "MANDATE-7"},
		{"___", 7, "MANDATE-7"},
		{"ÄÖÜ-verein 1234567890 abcdefghijkl", 1<<63 - 1, "AOUVEREIN123456-9223372036854775807"},
		{"ÄÖÜ-verein 1234567890 abcdefghijkl", 12345, "AOUVEREIN1234567890A-12345"},
		{"", -1 << 63, "MANDATE--9223372036854775808"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		got := MandateReference(c.prefix, c.id)
		if got != c.want {
			t.Errorf("MandateReference(%q, %d) = %q, want %q", c.prefix, c.id, got, c.want)
		}
		if err := CheckMandateReference(got); err != nil {
			t.Errorf("MandateReference(%q, %d) = %q: %v", c.prefix, c.id, got, err)
		}
	}
	for id := int64(1); id < 1000; id++ {
		r := MandateReference("TVJ", id)
		if seen[r] {
			t.Fatalf("%q twice", r)
		}
		seen[r] = true
	}
}

func TestSEPAText(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"Jürgen Größer", 0, "Jurgen Groser"},
		{"Françoise Lefèvre, Hélène Çelik", 0, "Francoise Lefevre, Helene Celik"},
		{"Œuvre Æsir cœur", 0, "Ouvre Asir cour"},
		{"Søren Ærø Åsa", 0, "Soren Aro Asa"},
		{"Łukasz Żółć Świętosław", 0, "Lukasz Zolc Swietoslaw"},
		{"Dvořák Čech Šťastný Ůžas", 0, "Dvorak Cech Stastny Uzas"},
		{"Müller & Söhne_GmbH [Nord] {Süd}", 0, "Muller + Sohne-GmbH (Nord) (Sud)"},
		{"  a \t\n b  ", 0, "a b"},
		{"«Straße» 10 % €", 0, "'Strase' 10 . E"},
		{"Ääääää", 3, "Aaa"},
		{"ab  cd", 3, "ab"},
		{"Mitgliedsbeitrag", 10, "Mitgliedsb"},
		{"", 5, ""},
	}
	for _, c := range cases {
		if got := SEPAText(c.in, c.max); got != c.want {
			t.Errorf("SEPAText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// Whatever goes in, SEPAText's result is in the SEPA set, trimmed, within
// max runes, and unchanged by a second pass; ParseCreditorID never panics
// and what it accepts it accepts again unchanged.
func FuzzSEPAText(f *testing.F) {
	for _, s := range []string{"Jürgen Größer", "«x» & y", "  ", "\x00\xff", "Łódź"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 200
		got := SEPAText(s, max)
		if max > 0 && utf8.RuneCountInString(got) > max {
			t.Fatalf("SEPAText(%q, %d) = %q is longer", s, max, got)
		}
		if got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("SEPAText(%q) = %q is not trimmed", s, got)
		}
		for _, r := range got {
			if !strings.ContainsRune(mandateReferenceChars, r) {
				t.Fatalf("SEPAText(%q) = %q has %q", s, got, r)
			}
		}
		if again := SEPAText(got, max); again != got {
			t.Fatalf("SEPAText(%q) = %q, again %q", s, got, again)
		}
	})
}

func FuzzParseCreditorID(f *testing.F) {
	for _, s := range []string{"DE98ZZZ09999999999", "fr72 zzz 123456", "", "DE00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ci, err := ParseCreditorID(s)
		if err != nil {
			return
		}
		again, err := ParseCreditorID(ci)
		if err != nil || again != ci {
			t.Fatalf("ParseCreditorID(%q) = %q, but then %q, %v", s, ci, again, err)
		}
		if len(ci) > 35 || !IsSEPACountry(ci[:2]) {
			t.Fatalf("ParseCreditorID(%q) = %q", s, ci)
		}
	})
}

func TestParseSEPAIBAN(t *testing.T) {
	for _, ok := range []string{"DE89 3704 0044 0532 0130 00", "CH9300762011623852957", "GB29NWBK60161331926819"} {
		if _, err := ParseSEPAIBAN(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		"BR1800360305000010009795493C1": "BR is not a SEPA country",
		"DE89370400440532013001":        "check digits",
	} {
		if _, err := ParseSEPAIBAN(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSEPAIBAN(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestSameBank(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"DE89370400440532013000", "DE05370400440532013001", true},  // Commerzbank Köln, two accounts
		{"DE89370400440532013000", "DE02120300000000202051", false}, // another Bankleitzahl
		{"FR1420041010050500013M02606", "FR7620041010050500013M02606", true},
		{"FR1420041010050500013M02606", "FR7630006000011234567890189", false},
		{"DE89370400440532013000", "AT611904300234573201", false},
		{"HU42117730161111101800000000", "HU42117730161111101800000000", false}, // country without a known place: not known the same
	}
	for _, c := range cases {
		if got := SameBank(IBAN(c.a), IBAN(c.b)); got != c.same {
			t.Errorf("SameBank(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
