package views

import (
	"reflect"
	"testing"
)

// TestStaffRegistrationTextsInEveryLanguage: German and French have every
// text of the registration page, with the English text's placeholders.
func TestStaffRegistrationTextsInEveryLanguage(t *testing.T) {
	translatedLikeEnglish(t, "staffRegistrationTextDE", staffRegistrationTextDE, StaffRegistrationText)
	translatedLikeEnglish(t, "staffRegistrationTextFR", staffRegistrationTextFR, StaffRegistrationText)
}

// translatedLikeEnglish checks a text struct of a language, named name,
// against english: every text given, with the English text's verbs.
func translatedLikeEnglish[T any](t *testing.T, name string, translated, english T) {
	t.Helper()
	tv, ev := reflect.ValueOf(translated), reflect.ValueOf(english)
	for i := range tv.NumField() {
		got, want := tv.Field(i).String(), ev.Field(i).String()
		if got == "" || want == "" {
			t.Errorf("%s.%s: %q, English %q", name, tv.Type().Field(i).Name, got, want)
		}
		if !reflect.DeepEqual(verbs.FindAllString(got, -1), verbs.FindAllString(want, -1)) {
			t.Errorf("%s.%s %q does not keep the verbs of %q", name, tv.Type().Field(i).Name, got, want)
		}
	}
}
