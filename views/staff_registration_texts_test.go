package views

import (
	"reflect"
	"testing"
)

// TestStaffRegistrationTextsInEveryLanguage: German and French have every
// text of the registration page, with the English text's placeholders.
func TestStaffRegistrationTextsInEveryLanguage(t *testing.T) {
	for name, translated := range map[string]StaffRegistrationTexts{"staffRegistrationTextDE": staffRegistrationTextDE, "staffRegistrationTextFR": staffRegistrationTextFR} {
		tv, ev := reflect.ValueOf(translated), reflect.ValueOf(StaffRegistrationText)
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
}
