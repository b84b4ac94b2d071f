package staff_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// hasFieldError reports whether an error body names field with a message
// containing msg.
func hasFieldError(e handlertest.HTTPError, field, msg string) bool {
	for _, f := range e.Errors {
		if f.Field == field && strings.Contains(f.Message, msg) {
			return true
		}
	}
	return false
}

// TestClubTextsThroughAdminAPI: price-rule labels, membership type and
// period names take texts per language; one given in some languages but
// not in every one the organisation enables is refused naming the field;
// clients that send only the plain text keep working.
func TestClubTextsThroughAdminAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		adm := func(method, path string, body any) handlertest.Response {
			t.Helper()
			return env.Admin(key, method, path, body)
		}
		const rules = "/api/admin/periods/1/price-rules"
		var got struct {
			Rules []map[string]any `json:"rules"`
		}
		res := adm(http.MethodGet, rules, nil)
		res.JSON(t, &got)
		if texts, _ := got.Rules[0]["labelTexts"].(map[string]any); texts["de"] != "Mitgliedschaft Erwachsene" || got.Rules[0]["label"] != "Adult membership" {
			t.Fatalf("rule 0 = %v", got.Rules[0])
		}
		delete(got.Rules[0]["labelTexts"].(map[string]any), "fr")
		e := handlertest.ExpectHTTPError(t, adm(http.MethodPut, rules, got), http.StatusUnprocessableEntity, rules)
		if !hasFieldError(e, "[0].labelTexts.fr", "has no text in fr") {
			t.Fatalf("errors %+v do not name [0].labelTexts.fr", e.Errors)
		}
		// A client that knows no languages: a plain label is every language's.
		got.Rules[0]["labelTexts"] = map[string]any{}
		got.Rules[0]["label"] = "Full membership"
		delete(got.Rules[1], "labelTexts")
		res = adm(http.MethodPut, rules, got)
		if res.Status != http.StatusOK {
			t.Fatalf("plain labels: %d %s", res.Status, res.Body)
		}
		if !strings.Contains(string(res.Body), `"label":"Full membership","labelTexts":{}`) {
			t.Fatalf("answer %s", res.Body)
		}

		const types = "/api/admin/membership-types"
		e = handlertest.ExpectHTTPError(t, adm(http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 65,
			"nameTexts": map[string]string{"de": "Senioren"}}), http.StatusUnprocessableEntity, types)
		if !hasFieldError(e, "nameTexts.fr", "has no text in fr") {
			t.Fatalf("errors %+v do not name nameTexts.fr", e.Errors)
		}
		res = adm(http.MethodPost, types, map[string]any{"code": "SENIOR", "minAge": 65,
			"nameTexts": map[string]string{"en": "Senior", "de": "Senioren", "fr": "Seniors"}})
		if res.Status != http.StatusCreated || !strings.Contains(string(res.Body), `"name":"Senior"`) || !strings.Contains(string(res.Body), `"de":"Senioren"`) {
			t.Fatalf("type: %d %s", res.Status, res.Body)
		}

		e = handlertest.ExpectHTTPError(t, adm(http.MethodPatch, "/api/admin/periods/1", map[string]any{"nameTexts": map[string]string{"fr": "Saison"}}),
			http.StatusUnprocessableEntity, "/api/admin/periods/1")
		if !hasFieldError(e, "nameTexts.de", "has no text in de") {
			t.Fatalf("errors %+v do not name nameTexts.de", e.Errors)
		}
		res = adm(http.MethodPatch, "/api/admin/periods/1", map[string]any{"name": "Season one", "nameTexts": map[string]string{"de": "Saison eins", "fr": "Saison un"}})
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"fr":"Saison un"`) {
			t.Fatalf("period: %d %s", res.Status, res.Body)
		}
	})
}

// TestStaffSetupTypeNamesPerLanguage: the setup page's type form edits
// the name in each language the organisation offers; a name given in
// some other languages but not in all is refused at its field, nothing
// stored.
func TestStaffSetupTypeNamesPerLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		// Editing the demo's adult type shows its German and French names.
		edit := env.Get(admin, "/staff/setup/memberships?edit_type=1")
		if edit.Doc.Find("#type-name-de").AttrOr("value", "") != "Erwachsene" || edit.Doc.Find("#type-name-fr").AttrOr("value", "") != "Adulte" ||
			edit.Doc.Find("#type-name-en").Length() != 0 {
			t.Fatalf("edit form: %s", edit.TestID("type-form").Text())
		}
		// In German, the price rules and the calculator's lines are German.
		calc := env.Get(admin, "/staff/setup/memberships?calc_period=1&calc_type=1&calc_member=NEW", "Accept-Language", "de")
		if total := calc.TestID("calc-total").Text(); total == "" || !strings.Contains(string(calc.Body), "Mitgliedschaft Erwachsene – Person 1") ||
			strings.Contains(calc.TestID("calc-result").Text()+calc.TestID("rules-table").Text(), "Adult membership") {
			t.Fatalf("German calculator (%q):\n%s", total, calc.TestID("calc-result").Text())
		}
		bad := env.Post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "nameTexts.de": {"Gast"}, "nameTexts.fr": {""}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.TestID("error-type-name-fr").Text(), "fr") ||
			bad.Doc.Find("#type-name-de").AttrOr("value", "") != "Gast" {
			t.Fatalf("a missing French name: %d %s", bad.Status, bad.TestID("type-form").Text())
		}
		types, _ := organisation.Of(env.Engine).MembershipTypes(t.Context(), 1)
		if len(types) != 2 {
			t.Fatalf("a refused type was stored: %+v", types)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "nameTexts.de": {"Gast"}, "nameTexts.fr": {"Invité"}}, origin...),
			"/staff/setup/memberships?done=type-added")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/types/1", url.Values{"code": {"ADULT"}, "name": {"Adult"}, "minAge": {"18"}, "nameTexts.de": {""}, "nameTexts.fr": {""}}, origin...),
			"/staff/setup/memberships?done=type-changed")
		types, _ = organisation.Of(env.Engine).MembershipTypes(t.Context(), 1)
		if types[0].Code != "ADULT" || len(types[0].NameTexts) != 0 || types[2].NameTexts["fr"] != "Invité" {
			t.Fatalf("types = %+v", types)
		}
	})
}

// TestStaffMoneyAndStatesInGerman: a staff page in German writes money as the
// member pages do (184,50 EUR), states in German and age groups in
// German, not the stored spellings.
func TestStaffMoneyAndStatesInGerman(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.BankTransferStaffEnv(t, db)
		env.CompleteDemo(env.NewClient())
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		c := env.MustStaffSignIn("treasurer@example.org", "/staff/registrations")
		de := []string{"Accept-Language", "de"}
		list := env.Get(c, "/staff/registrations", de...)
		detailURL := list.TestID("registration-row").Find(`[data-testid=registration-link]`).AttrOr("href", "")
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		money := fmt.Sprintf("%d,%02d\u00a0EUR", order.TotalMinor/100, order.TotalMinor%100)
		d := env.Get(c, detailURL, de...)
		if d.Doc.Find("html").AttrOr("lang", "") != "de" {
			t.Fatalf("detail not German: %s", d.Body)
		}
		if got := d.TestID("order-status").Text(); got != "unbezahlt" {
			t.Errorf("order status %q, want unbezahlt", got)
		}
		if got := d.TestID("person-membership").First().Text(); !strings.Contains(got, "Zahlung ausstehend") || !strings.Contains(got, "Erwachsene") {
			t.Errorf("membership %q lacks the German status or type name", got)
		}
		if body := string(d.Body); !strings.Contains(body, money) || strings.Contains(body, "EUR "+strings.ReplaceAll(money[:len(money)-len("\u00a0EUR")], ",", ".")) {
			t.Errorf("detail does not write %q as the member pages do", money)
		}
		ov := env.Get(c, "/staff", de...)
		if !strings.Contains(ov.Doc.Text(), "unter 12") || strings.Contains(ov.Doc.Text(), "65 and over") || !strings.Contains(string(ov.Body), money) {
			t.Errorf("overview in German: age groups or money in English:\n%s", ov.Doc.Text())
		}
	})
}
