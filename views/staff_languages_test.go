package views

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"golang.org/x/text/language"

	"portal/views/lang"
)

// verbs are a text's fmt verbs (%d, %s), which a translation must keep in
// order: the handlers fill them with Sprintf.
var verbs = regexp.MustCompile(`%[a-z]`)

// checkTranslation fails for every text of translated that is empty or
// whose verbs differ from english's.
func checkTranslation(t *testing.T, name string, translated, english any) {
	t.Helper()
	tv, ev := reflect.ValueOf(translated), reflect.ValueOf(english)
	if tv.NumField() < 30 {
		t.Fatalf("%s has %d fields", name, tv.NumField())
	}
	for i := range tv.NumField() {
		field := tv.Type().Field(i).Name
		got, want := tv.Field(i).String(), ev.Field(i).String()
		if got == "" {
			t.Errorf("%s.%s has no translation of %q", name, field, want)
		}
		if !slices.Equal(verbs.FindAllString(got, -1), verbs.FindAllString(want, -1)) {
			t.Errorf("%s.%s %q does not keep the verbs of %q", name, field, got, want)
		}
	}
}

// TestStaffTextsInEveryLanguage: German and French have every staff text,
// with the English text's placeholders.
func TestStaffTextsInEveryLanguage(t *testing.T) {
	checkTranslation(t, "staffTextDE", staffTextDE, StaffText)
	checkTranslation(t, "staffTextFR", staffTextFR, StaffText)
	checkTranslation(t, "staffOpsTextDE", staffOpsTextDE, StaffOpsText)
	checkTranslation(t, "staffOpsTextFR", staffOpsTextFR, StaffOpsText)
	checkTranslation(t, "staffOpenPaymentTextDE", staffOpenPaymentTextDE, StaffOpenPaymentText)
	checkTranslation(t, "staffOpenPaymentTextFR", staffOpenPaymentTextFR, StaffOpenPaymentText)
	checkTranslation(t, "staffDebitTextDE", staffDebitTextDE, StaffDebitText)
	checkTranslation(t, "staffDebitTextFR", staffDebitTextFR, StaffDebitText)
	for _, code := range lang.Codes {
		if staffTexts[code] == nil || staffOpsTexts[code] == nil {
			t.Errorf("no staff texts in %s", code)
		}
	}
}

// TestStaffTextsFollowTheLanguage: the request's language chooses the
// texts; without one, or in a language without staff texts, English.
func TestStaffTextsFollowTheLanguage(t *testing.T) {
	in := func(code string) context.Context {
		return lang.With(context.Background(), lang.New(code, language.Und))
	}
	for _, tc := range []struct {
		ctx              context.Context
		signOut, payment string
	}{
		{context.Background(), "Sign out", "Payments"},
		{in("en"), "Sign out", "Payments"},
		{in("de"), "Abmelden", "Zahlungen"},
		{in("fr"), "Se déconnecter", "Paiements"},
	} {
		if got := StaffTextIn(tc.ctx).SignOut; got != tc.signOut {
			t.Errorf("SignOut %q, want %q", got, tc.signOut)
		}
		if got := StaffOpsTextIn(tc.ctx).NavPayments; got != tc.payment {
			t.Errorf("NavPayments %q, want %q", got, tc.payment)
		}
	}
}

// TestStaffTextFallsBackToEnglish: a text a translation lacks (a field
// added in English only) shows in English, never as nothing, and the
// English texts are not changed by filling it in.
func TestStaffTextFallsBackToEnglish(t *testing.T) {
	partial := withEnglish(StaffTexts{Product: "Verwaltung"}, StaffText)
	if partial.Product != "Verwaltung" || partial.SignOut != StaffText.SignOut || partial.OvNoPeriod != StaffText.OvNoPeriod {
		t.Fatalf("partial translation: Product %q, SignOut %q, OvNoPeriod %q", partial.Product, partial.SignOut, partial.OvNoPeriod)
	}
	ops := withEnglish(StaffOpsTexts{}, StaffOpsText)
	if *ops != StaffOpsText {
		t.Fatal("an empty translation is not the English texts")
	}
	if StaffText.Product != "Staff" {
		t.Fatalf("the English texts changed: %q", StaffText.Product)
	}
}

// TestStaffWebhookTextsInEveryLanguage: German and French have every text
// of the webhooks page, with the English text's placeholders.
func TestStaffWebhookTextsInEveryLanguage(t *testing.T) {
	for name, translated := range map[string]StaffWebhookTexts{"de": staffWebhookTextDE, "fr": staffWebhookTextFR} {
		tv, ev := reflect.ValueOf(translated), reflect.ValueOf(StaffWebhookText)
		for i := range tv.NumField() {
			got, want := tv.Field(i).String(), ev.Field(i).String()
			if got == "" {
				t.Errorf("%s: %s has no translation of %q", name, tv.Type().Field(i).Name, want)
			}
			if !slices.Equal(verbs.FindAllString(got, -1), verbs.FindAllString(want, -1)) {
				t.Errorf("%s: %s %q does not keep the verbs of %q", name, tv.Type().Field(i).Name, got, want)
			}
		}
	}
	for _, code := range lang.Codes {
		if staffWebhookTexts[code] == nil {
			t.Errorf("no webhook texts in %s", code)
		}
	}
}
