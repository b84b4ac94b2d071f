package staff_test

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/lang"
	"portal/views/staffview"
)

// englishStaffTexts are the English staff texts long enough to be
// telling, cut at their fmt verbs, that German writes differently.
func englishStaffTexts(t *testing.T) []string {
	t.Helper()
	de := lang.With(t.Context(), lang.New("de", language.Und))
	verb := regexp.MustCompile(`%[a-z]`)
	var out []string
	for _, pair := range [][2]any{{*staffview.Text, *staffview.TextIn(de)}, {*staffview.OpsText, *staffview.OpsTextIn(de)},
		{*staffview.SetupText, *staffview.SetupTextIn(de)}, {*staffview.WebhookText, *staffview.WebhookTextIn(de)},
		{*staffview.OpenPaymentText, *staffview.OpenPaymentTextIn(de)}, {*staffview.YearReportText, *staffview.YearReportTextIn(de)},
		{*staffview.ListText, *staffview.ListTextIn(de)}, {*staffview.DebitText, *staffview.DebitTextIn(de)}} {
		en, other := reflect.ValueOf(pair[0]), reflect.ValueOf(pair[1])
		for i := range en.NumField() {
			if en.Field(i).String() == other.Field(i).String() {
				continue // the same in both (Total, Version)
			}
			for _, part := range verb.Split(en.Field(i).String(), -1) {
				if part = strings.TrimSpace(part); len(part) >= 8 {
					out = append(out, part)
				}
			}
		}
	}
	return out
}

// TestStaffPagesInGerman: the staff frame has the language switcher; once
// German is chosen, every staff page an administrator sees is German (its
// <html lang>, navigation, titles, tables, forms and result messages),
// with no English staff text but the club's data; French likewise for the
// frame.
func TestStaffPagesInGerman(t *testing.T) {
	env := handlertest.BankTransferStaffEnv(t, dbtest.SQLite(t))
	env.CompleteDemo(env.NewClient())
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	c := env.MustStaffSignIn("admin@example.org", "/staff")
	english := env.Get(c, "/staff")
	if english.Status != http.StatusOK || english.Doc.Find("html").AttrOr("lang", "") != "en" || english.TestID("lang-de").Length() != 1 {
		t.Fatalf("the overview in English, with a switcher: %d\n%s", english.Status, english.Body)
	}
	handlertest.ExpectRedirect(t, env.Get(c, english.TestID("lang-de").AttrOr("href", "")), "/staff")
	catalogue := englishStaffTexts(t)
	if len(catalogue) < 200 {
		t.Fatalf("%d English staff texts", len(catalogue))
	}
	detail := env.Get(c, "/staff/registrations").TestID("registration-link").AttrOr("href", "")
	if detail == "" {
		t.Fatal("no registration to show")
	}
	for _, path := range []string{"/staff", "/staff/registrations", detail, "/staff/payments", "/staff/jobs", "/staff/invitations",
		"/staff/setup?done=org-saved", "/staff/processes", "/staff/audit", "/staff/webhooks", "/staff/open-payments", "/staff/year-report", "/staff/debits"} {
		p := env.Get(c, path)
		if p.Status != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, p.Status, p.Body)
		}
		if l := p.Doc.Find("html").AttrOr("lang", ""); l != "de" {
			t.Errorf("%s: lang %q", path, l)
		}
		if p.TestID("lang-de").AttrOr("aria-current", "") != "true" || p.TestID("lang-fr").Length() != 1 {
			t.Errorf("%s: no switcher with German current", path)
		}
		// The engine describes a definition's conditions in English (not
		// translated yet); the rest that is English is the club's data.
		p.Doc.Find(`[data-testid="language-switcher"], [data-testid="definition-condition"], script, style`).Remove()
		text := handlertest.SpacedText(p.Doc.Find("title")) + " " + handlertest.SpacedText(p.Doc.Find("body"))
		// The order lines are the club's data too, stored in the language
		// the member registered in (here English), and two of them read
		// like the staff texts that name price rules' kinds.
		for _, data := range []string{"Joining fee (new member)", "Early-bird discount 10%", "Administration fee", "Is this person transferring from another club?",
			"Which club is this person transferring from?", `{"disabled":false`} {
			text = strings.ReplaceAll(text, data, "")
		}
		if testing.Verbose() {
			t.Logf("%s:\n%s", path, text)
		}
		for _, en := range catalogue {
			if strings.Contains(text, en) {
				t.Errorf("%s shows the English %q:\n%s", path, en, text)
			}
		}
		if nav := handlertest.SpacedText(p.TestID("staff-nav")); !strings.Contains(nav, "Übersicht") || !strings.Contains(nav, "Einstellungen") {
			t.Errorf("%s: navigation %q", path, nav)
		}
	}
	if flash := env.Get(c, "/staff/setup?done=org-saved").TestID("staff-flash").Text(); flash != "Die Einstellungen der Organisation wurden gespeichert." {
		t.Errorf("flash %q", flash)
	}
	handlertest.ExpectRedirect(t, env.Get(c, "/staff?lang=fr"), "/staff")
	if p := env.Get(c, "/staff"); p.Doc.Find("html").AttrOr("lang", "") != "fr" || p.TestID("staff-sign-out").Text() != "Se déconnecter" ||
		!strings.Contains(p.Doc.Find("title").Text(), "Vue d’ensemble de la saison – Gestion") {
		t.Errorf("the overview in French: %s", p.Body)
	}
}
