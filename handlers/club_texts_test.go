package handlers_test

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
)

// hasFieldError reports whether an error body names field with a message
// containing msg.
func hasFieldError(e httpError, field, msg string) bool {
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
		env := newEnv(t, db)
		key, _ := env.apiKey(1, organisation.ScopeWrite)
		adm := func(method, path string, body any) response {
			t.Helper()
			return env.admin(key, method, path, body)
		}
		const rules = "/api/admin/periods/1/price-rules"
		var got struct {
			Rules []map[string]any `json:"rules"`
		}
		res := adm(http.MethodGet, rules, nil)
		res.json(t, &got)
		if texts, _ := got.Rules[0]["labelTexts"].(map[string]any); texts["de"] != "Mitgliedschaft Erwachsene" || got.Rules[0]["label"] != "Adult membership" {
			t.Fatalf("rule 0 = %v", got.Rules[0])
		}
		delete(got.Rules[0]["labelTexts"].(map[string]any), "fr")
		e := expectHTTPError(t, adm(http.MethodPut, rules, got), http.StatusUnprocessableEntity, rules)
		if !hasFieldError(e, "[0].labelTexts.fr", "has no text in fr") {
			t.Fatalf("errors %+v do not name [0].labelTexts.fr", e.Errors)
		}
		// A client that knows no languages: a plain label is every language's.
		got.Rules[0]["labelTexts"] = map[string]any{}
		got.Rules[0]["label"] = "Full membership"
		delete(got.Rules[1], "labelTexts")
		res = adm(http.MethodPut, rules, got)
		if res.status != http.StatusOK {
			t.Fatalf("plain labels: %d %s", res.status, res.body)
		}
		if !strings.Contains(string(res.body), `"label":"Full membership","labelTexts":{}`) {
			t.Fatalf("answer %s", res.body)
		}

		const types = "/api/admin/membership-types"
		e = expectHTTPError(t, adm(http.MethodPost, types, map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 65,
			"nameTexts": map[string]string{"de": "Senioren"}}), http.StatusUnprocessableEntity, types)
		if !hasFieldError(e, "nameTexts.fr", "has no text in fr") {
			t.Fatalf("errors %+v do not name nameTexts.fr", e.Errors)
		}
		res = adm(http.MethodPost, types, map[string]any{"code": "SENIOR", "minAge": 65,
			"nameTexts": map[string]string{"en": "Senior", "de": "Senioren", "fr": "Seniors"}})
		if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"name":"Senior"`) || !strings.Contains(string(res.body), `"de":"Senioren"`) {
			t.Fatalf("type: %d %s", res.status, res.body)
		}

		e = expectHTTPError(t, adm(http.MethodPatch, "/api/admin/periods/1", map[string]any{"nameTexts": map[string]string{"fr": "Saison"}}),
			http.StatusUnprocessableEntity, "/api/admin/periods/1")
		if !hasFieldError(e, "nameTexts.de", "has no text in de") {
			t.Fatalf("errors %+v do not name nameTexts.de", e.Errors)
		}
		res = adm(http.MethodPatch, "/api/admin/periods/1", map[string]any{"name": "Season one", "nameTexts": map[string]string{"de": "Saison eins", "fr": "Saison un"}})
		if res.status != http.StatusOK || !strings.Contains(string(res.body), `"fr":"Saison un"`) {
			t.Fatalf("period: %d %s", res.status, res.body)
		}
	})
}

// TestStaffSetupTypeNamesPerLanguage: the setup page's type form edits
// the name in each language the organisation offers; a name given in
// some other languages but not in all is refused at its field, nothing
// stored.
func TestStaffSetupTypeNamesPerLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		// Editing the demo's adult type shows its German and French names.
		edit := env.get(admin, "/staff/setup/memberships?edit_type=1")
		if edit.doc.Find("#type-name-de").AttrOr("value", "") != "Erwachsene" || edit.doc.Find("#type-name-fr").AttrOr("value", "") != "Adulte" ||
			edit.doc.Find("#type-name-en").Length() != 0 {
			t.Fatalf("edit form: %s", edit.testid("type-form").Text())
		}
		// In German, the price rules and the calculator's lines are German.
		calc := env.get(admin, "/staff/setup/memberships?calc_period=1&calc_type=1&calc_member=NEW", "Accept-Language", "de")
		if total := calc.testid("calc-total").Text(); total == "" || !strings.Contains(string(calc.body), "Mitgliedschaft Erwachsene – Person 1") ||
			strings.Contains(calc.testid("calc-result").Text()+calc.testid("rules-table").Text(), "Adult membership") {
			t.Fatalf("German calculator (%q):\n%s", total, calc.testid("calc-result").Text())
		}
		bad := env.post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "nameTexts.de": {"Gast"}, "nameTexts.fr": {""}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.testid("error-type-name-fr").Text(), "fr") ||
			bad.doc.Find("#type-name-de").AttrOr("value", "") != "Gast" {
			t.Fatalf("a missing French name: %d %s", bad.status, bad.testid("type-form").Text())
		}
		types, _ := organisation.Of(env.svc).MembershipTypes(t.Context(), 1)
		if len(types) != 2 {
			t.Fatalf("a refused type was stored: %+v", types)
		}
		expectRedirect(t, env.post(admin, "/staff/setup/types", url.Values{"code": {"GUEST"}, "name": {"Guest"}, "nameTexts.de": {"Gast"}, "nameTexts.fr": {"Invité"}}, origin...),
			"/staff/setup/memberships?done=type-added")
		expectRedirect(t, env.post(admin, "/staff/setup/types/1", url.Values{"code": {"ADULT"}, "name": {"Adult"}, "minAge": {"18"}, "nameTexts.de": {""}, "nameTexts.fr": {""}}, origin...),
			"/staff/setup/memberships?done=type-changed")
		types, _ = organisation.Of(env.svc).MembershipTypes(t.Context(), 1)
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
		env := bankTransferStaffEnv(t, db)
		env.completeDemo(env.newClient())
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		c := env.mustStaffSignIn("treasurer@example.org", "/staff/registrations")
		de := []string{"Accept-Language", "de"}
		list := env.get(c, "/staff/registrations", de...)
		detailURL := list.testid("registration-row").Find(`[data-testid=registration-link]`).AttrOr("href", "")
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		money := fmt.Sprintf("%d,%02d\u00a0EUR", order.TotalMinor/100, order.TotalMinor%100)
		d := env.get(c, detailURL, de...)
		if d.doc.Find("html").AttrOr("lang", "") != "de" {
			t.Fatalf("detail not German: %s", d.body)
		}
		if got := d.testid("order-status").Text(); got != "unbezahlt" {
			t.Errorf("order status %q, want unbezahlt", got)
		}
		if got := d.testid("person-membership").First().Text(); !strings.Contains(got, "Zahlung ausstehend") || !strings.Contains(got, "Erwachsene") {
			t.Errorf("membership %q lacks the German status or type name", got)
		}
		if body := string(d.body); !strings.Contains(body, money) || strings.Contains(body, "EUR "+strings.ReplaceAll(money[:len(money)-len("\u00a0EUR")], ",", ".")) {
			t.Errorf("detail does not write %q as the member pages do", money)
		}
		ov := env.get(c, "/staff", de...)
		if !strings.Contains(ov.doc.Text(), "unter 12") || strings.Contains(ov.doc.Text(), "65 and over") || !strings.Contains(string(ov.body), money) {
			t.Errorf("overview in German: age groups or money in English:\n%s", ov.doc.Text())
		}
	})
}
