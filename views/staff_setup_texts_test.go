package views

import "testing"

// TestStaffSetupTextsInEveryLanguage: German and French have every text
// of the setup settings and of the setup's sections, with the English
// text's placeholders.
func TestStaffSetupTextsInEveryLanguage(t *testing.T) {
	translatedLikeEnglish(t, "staffSetupTextDE", staffSetupTextDE, StaffSetupText)
	translatedLikeEnglish(t, "staffSetupTextFR", staffSetupTextFR, StaffSetupText)
	translatedLikeEnglish(t, "staffSetupSectionTextDE", staffSetupSectionTextDE, StaffSetupSectionText)
	translatedLikeEnglish(t, "staffSetupSectionTextFR", staffSetupSectionTextFR, StaffSetupSectionText)
}
