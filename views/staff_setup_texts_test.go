package views

import "testing"

// TestStaffSetupTextsInEveryLanguage: German and French have every text
// of the setup settings, with the English text's placeholders.
func TestStaffSetupTextsInEveryLanguage(t *testing.T) {
	translatedLikeEnglish(t, "staffSetupTextDE", staffSetupTextDE, StaffSetupText)
	translatedLikeEnglish(t, "staffSetupTextFR", staffSetupTextFR, StaffSetupText)
}
