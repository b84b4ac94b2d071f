package views

import (
	"reflect"
	"testing"
)

// TestStaffSetupTextsInEveryLanguage: German and French have every text
// of the setup settings and of the setup's sections, with the English
// text's placeholders.
func TestStaffSetupTextsInEveryLanguage(t *testing.T) {
	for name, texts := range map[string][2]any{
		"staffSetupTextDE": {staffSetupTextDE, StaffSetupText}, "staffSetupTextFR": {staffSetupTextFR, StaffSetupText},
		"staffSetupSectionTextDE": {staffSetupSectionTextDE, StaffSetupSectionText}, "staffSetupSectionTextFR": {staffSetupSectionTextFR, StaffSetupSectionText},
	} {
		tv, ev := reflect.ValueOf(texts[0]), reflect.ValueOf(texts[1])
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
