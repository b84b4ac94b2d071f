package lang

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"golang.org/x/text/language"
)

// TestEveryLanguageHasEveryKey: a text added in one language and
// forgotten in another would show its key (or English) to members.
func TestEveryLanguageHasEveryKey(t *testing.T) {
	en, err := messageIDs("en")
	if err != nil {
		t.Fatal(err)
	}
	if len(en) < 100 {
		t.Fatalf("en has %d messages; the catalogue did not load", len(en))
	}
	for _, code := range Codes[1:] {
		ids, err := messageIDs(code)
		if err != nil {
			t.Fatal(err)
		}
		for id := range en {
			if !ids[id] {
				t.Errorf("%s lacks %q", code, id)
			}
		}
		for id := range ids {
			if !en[id] {
				t.Errorf("%s has %q, which en does not", code, id)
			}
		}
	}
}

// TestPlaceholdersMatch: a translation that drops or renames a
// placeholder loses the name or number it should show. The typed groups'
// texts are filled with Sprintf, so their verbs (%s, %d) must come in
// the English order.
func TestPlaceholdersMatch(t *testing.T) {
	placeholder := regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)
	verbs := regexp.MustCompile(`%[a-z]`)
	// Rendered with markers as data, the placeholders show by name.
	data := map[string]any{}
	for _, name := range []string{"Title", "Number", "Total", "Date", "Status", "RequestID", "Param",
		"Club", "Period", "Persons", "Name", "Type", "Ends", "Ending", "Next", "Expires", "What", "Addresses",
		"Kind", "About", "Household", "Message", "URL"} {
		data[name] = "{{." + name + "}}"
	}
	groups := map[string]map[string]string{}
	for _, code := range Codes {
		texts, err := groupTexts(code)
		if err != nil {
			t.Fatal(err)
		}
		groups[code] = texts
	}
	// text is a message rendered with the markers, or a group's text as
	// written (a page fills its verbs with Sprintf).
	text := func(code, id string) string {
		if s, ok := groups[code][id]; ok {
			return s
		}
		return New(code, language.Und).T(id, data)
	}
	ids, _ := messageIDs("en")
	if len(groups["en"]) < 500 {
		t.Fatalf("%d group texts in English; the group files did not load", len(groups["en"]))
	}
	for id := range ids {
		english := text("en", id)
		want := placeholder.FindAllString(english, -1)
		sort.Strings(want)
		for _, code := range Codes[1:] {
			translated := text(code, id)
			got := placeholder.FindAllString(translated, -1)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s %q has placeholders %v, en has %v", code, id, got, want)
			}
			if !slices.Equal(verbs.FindAllString(translated, -1), verbs.FindAllString(english, -1)) {
				t.Errorf("%s %q %q does not keep the verbs of %q", code, id, translated, english)
			}
		}
	}
}

func TestChoose(t *testing.T) {
	all := []string{"en", "de", "fr"}
	tests := []struct {
		name string
		c    Choice
		want string
		tag  string
	}{
		{"explicit choice wins over the browser", Choice{Explicit: "fr", AcceptLanguage: "de-CH,de;q=0.9", Default: "en", Enabled: all}, "fr", "fr"},
		{"browser language", Choice{AcceptLanguage: "de-CH,de;q=0.9,en;q=0.5", Default: "en", Enabled: all}, "de", "de-CH"},
		{"browser's second choice when the first is not offered", Choice{AcceptLanguage: "it-CH,fr;q=0.8", Default: "de-CH", Enabled: all}, "fr", "fr"},
		{"organisation default when the browser's languages are not offered", Choice{AcceptLanguage: "it", Default: "de-CH", Enabled: all}, "de", "de-CH"},
		{"no header: organisation default with its region", Choice{Default: "fr-CH", Enabled: all}, "fr", "fr-CH"},
		{"explicit choice the organisation does not enable is ignored", Choice{Explicit: "fr", AcceptLanguage: "fr", Default: "de", Enabled: []string{"de", "en"}}, "de", "de"},
		{"unknown explicit choice is ignored", Choice{Explicit: "xx", Default: "en", Enabled: all}, "en", "en"},
		{"default not enabled: the first enabled language", Choice{Default: "en", Enabled: []string{"fr"}}, "fr", "fr"},
		{"nothing enabled means all", Choice{AcceptLanguage: "fr-FR"}, "fr", "fr-FR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := Choose(tc.c)
			if l.Code != tc.want || l.Tag.String() != tc.tag {
				t.Fatalf("Choose = %s (%s), want %s (%s)", l.Code, l.Tag, tc.want, tc.tag)
			}
		})
	}
}

func TestMoneyAndDates(t *testing.T) {
	tests := []struct{ tag, code, want string }{
		{"de-CH", "CHF", "CHF 1’234.50"},
		{"fr-CH", "CHF", "1\u00a0234,50\u00a0CHF"},
		{"de-DE", "EUR", "1.234,50\u00a0EUR"},
		{"fr-FR", "EUR", "1\u00a0234,50\u00a0EUR"},
		{"en", "EUR", "EUR 1,234.50"},
	}
	for _, tc := range tests {
		l := New(tc.tag[:2], language.MustParse(tc.tag))
		if got := l.Money(123450, tc.code); got != tc.want {
			t.Errorf("%s Money = %q, want %q", tc.tag, got, tc.want)
		}
	}
	d := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	for code, want := range map[string]string{"en": "1 March 2027", "de": "1. März 2027", "fr": "1er mars 2027"} {
		if got := New(code, language.Und).Date(d); got != want {
			t.Errorf("%s Date = %q, want %q", code, got, want)
		}
	}
}

func TestContext(t *testing.T) {
	if got := T(context.Background(), "step_back"); got != "Back" {
		t.Fatalf("without a language: %q", got)
	}
	ctx := With(context.Background(), New("de", language.Und))
	if got := T(ctx, "step_back"); got != "Zurück" {
		t.Fatalf("German: %q", got)
	}
	if got := T(ctx, "no_such_key"); got != "no_such_key" {
		t.Fatalf("a missing key shows itself, got %q", got)
	}
}

// TestEngineLanguagesMatch: the engine checks definitions and organisation
// settings against its own list of languages; it must be this one.
func TestEngineLanguagesMatch(t *testing.T) {
	if !slices.Equal(Codes, engineLanguages) {
		t.Fatalf("lang.Codes = %v, engine.Languages = %v", Codes, engineLanguages)
	}
}
