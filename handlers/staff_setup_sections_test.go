package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/staff"
)

// setupSections are the setup's sections and a form each one shows.
var setupSections = []struct{ slug, form string }{
	{"organisation", "org-form"}, {"languages", "languages-form"}, {"payments", "payments-form"}, {"messages", "messages-form"},
	{"memberships", "type-form"}, {"staff", "staff-add-form"}, {"api-keys", "api-key-form"}, {"data-protection", "retention-form"},
}

// TestStaffSetupSections: /staff/setup lists the sections; each section
// is a page of its own with the section navigation marking it, showing
// its own form and none of the others'; an unknown section is not found.
func TestStaffSetupSections(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")

		index := env.get(admin, "/staff/setup")
		if index.status != http.StatusOK || index.testid("setup-section-list").Find("li").Length() != len(setupSections) {
			t.Fatalf("section list: %d %s", index.status, index.testid("staff-main").Text())
		}
		for _, sec := range setupSections {
			href := index.testid("setup-link-"+sec.slug).AttrOr("href", "")
			if href != "/staff/setup/"+sec.slug {
				t.Errorf("link to %s: %q", sec.slug, href)
			}
			p := env.get(admin, href)
			if p.status != http.StatusOK || p.testid("setup-section-"+sec.slug).Length() != 1 || p.testid(sec.form).Length() != 1 {
				t.Fatalf("section %s: %d %s", sec.slug, p.status, p.testid("staff-main").Text())
			}
			if cur := p.testid("setup-sections").Find(`[aria-current=page]`); cur.Length() != 1 || cur.AttrOr("href", "") != href {
				t.Errorf("section %s: the navigation marks %q", sec.slug, cur.AttrOr("href", ""))
			}
			for _, other := range setupSections {
				if other.slug != sec.slug && p.testid(other.form).Length() != 0 {
					t.Errorf("section %s also shows %s", sec.slug, other.form)
				}
			}
			if p.testid("setup-sections").Find("a").Length() != len(setupSections) {
				t.Errorf("section %s: the navigation has %d links", sec.slug, p.testid("setup-sections").Find("a").Length())
			}
		}
		if p := env.get(admin, "/staff/setup/nope"); p.status != http.StatusNotFound {
			t.Errorf("an unknown section: %d", p.status)
		}
		// The staff table has no column of Disable buttons of its own: each
		// is in the role's cell.
		staff := env.get(admin, "/staff/setup/staff")
		if staff.testid("staff-table").Find("thead th").Length() != 3 ||
			staff.doc.Find(`[data-testid=staff-row] td:nth-child(3) [data-testid=staff-disable]`).Length() != 1 {
			t.Errorf("staff table: %s", staff.testid("staff-table").Text())
		}
	})
}

// TestStaffSetupAPIKeys: an administrator makes an API key, shown once,
// which the admin API accepts; revoking it asks first, then the API
// refuses it. Both are audited; a key without a name is refused by its
// field.
func TestStaffSetupAPIKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		if p := env.get(admin, "/staff/setup/api-keys"); p.testid("api-keys-empty").Length() != 1 {
			t.Fatalf("no keys yet: %s", p.testid("staff-main").Text())
		}
		bad := env.post(admin, "/staff/setup/api-keys", url.Values{"name": {" "}, "scope": {"write"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-api-key-name").Length() != 1 {
			t.Fatalf("a key without a name: %d %s", bad.status, bad.testid("api-key-form").Text())
		}
		made := env.post(admin, "/staff/setup/api-keys", url.Values{"name": {"Accounting"}, "scope": {"read"}}, origin...)
		key := made.testid("api-key-value").Text()
		if made.status != http.StatusOK || !strings.HasPrefix(key, organisation.APIKeyPrefix) || made.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("new key: %d %q", made.status, key)
		}
		if res := env.admin(key, http.MethodGet, "/api/admin/organisation", nil); res.status != http.StatusOK {
			t.Fatalf("the new key on the admin API: %d %s", res.status, res.body)
		}
		list := env.get(admin, "/staff/setup/api-keys")
		row := list.doc.Find(`[data-testid=api-key-row][data-name=Accounting]`)
		if row.Length() != 1 || strings.Contains(string(list.body), key) {
			t.Fatalf("the list shows the key or lacks it: %s", list.testid("api-keys-table").Text())
		}
		revoke := row.Find(`form`).AttrOr("action", "")
		if ask := env.post(admin, revoke, url.Values{}, origin...); ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("revoking without confirmation: %d", ask.status)
		}
		expectRedirect(t, env.post(admin, revoke, url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/api-keys?done=api-key-revoked")
		if res := env.admin(key, http.MethodGet, "/api/admin/organisation", nil); res.status != http.StatusUnauthorized {
			t.Fatalf("a revoked key on the admin API: %d", res.status)
		}
		if p := env.get(admin, "/staff/setup/api-keys"); p.doc.Find(`[data-testid=api-key-row][data-name=Accounting] [data-testid=api-key-revoked]`).Length() != 1 {
			t.Fatalf("revoked key: %s", p.testid("api-keys-table").Text())
		}
		if env.auditActions("api_key.create") != 1 || env.auditActions("api_key.revoke") != 1 {
			t.Errorf("audit: %d create, %d revoke", env.auditActions("api_key.create"), env.auditActions("api_key.revoke"))
		}
	})
}

// TestStaffSetupPeriodTexts: the memberships section edits a period's
// name and its price rules' labels per enabled language; a text given in
// some languages but not in every enabled one is refused naming the
// field, nothing stored; saved texts are audited and shown to a member
// registering in German or French. A language enabled after the texts
// were given lists them as texts to translate.
func TestStaffSetupPeriodTexts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{organisationRefresh: -1})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		p := env.get(admin, "/staff/setup/memberships")
		if got := p.doc.Find("#texts-1-rules-admin-fee-labelTexts-de").AttrOr("value", ""); got != "Bearbeitungsgebühr" {
			t.Fatalf("admin fee in German: %q\n%s", got, p.testid("period-texts").First().Text())
		}
		form := url.Values{}
		p.doc.Find(`[data-testid=period-texts][data-period="1"] input`).Each(func(_ int, in *goquery.Selection) {
			form.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
		})
		form.Set("rules.admin-fee.labelTexts.de", "Verwaltungsbeitrag")
		form.Set("rules.admin-fee.labelTexts.fr", "")
		bad := env.post(admin, "/staff/setup/periods/1/texts", form, origin...)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.testid("error-texts-1-rules-admin-fee-labelTexts-fr").Text(), "fr") ||
			bad.doc.Find("#texts-1-rules-admin-fee-labelTexts-de").AttrOr("value", "") != "Verwaltungsbeitrag" {
			t.Fatalf("a missing French label: %d %s", bad.status, bad.testid("setup-problem").Text())
		}
		rules, _ := organisation.Of(env.svc).PriceRules(t.Context(), 1, 1)
		for _, r := range rules {
			if r.Code == "admin-fee" && r.LabelTexts["de"] != "Bearbeitungsgebühr" {
				t.Fatalf("a refused change was stored: %+v", r)
			}
		}
		form.Set("rules.admin-fee.labelTexts.fr", "Frais de dossier")
		form.Set("nameTexts.de", "Saison der Ruderer")
		expectRedirect(t, env.post(admin, "/staff/setup/periods/1/texts", form, origin...), "/staff/setup/memberships?done=texts-saved")
		if n := env.auditActions("period.texts"); n != 1 {
			t.Errorf("%d period.texts audit entries", n)
		}

		// A member registering in German, then in French, sees those texts.
		c := env.browserLogin("demo")
		env.post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}})
		answers := map[int]url.Values{1: {"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}, 2: {"answer-1": {"M"}, "answer-3": {"S"}},
			3: {"answer-1": {"1"}}, 4: {}, 6: {"answer-3": {"1"}}, 7: {"one": {"1"}}, 8: {"answer-1": {"1"}, "answer-3": {"1"}}}
		for _, step := range []int{1, 2, 3, 4, 6, 7} {
			env.post(c, "/membership/register/1/step/"+strconv.Itoa(step), answers[step])
		}
		expectRedirect(t, env.post(c, "/membership/register/1/step/8", answers[8]), "/membership/register/1/review")
		for lang, want := range map[string]string{"de": "Verwaltungsbeitrag", "fr": "Frais de dossier"} {
			env.get(c, "/membership/register/1/review?lang="+lang)
			review := env.get(c, "/membership/register/1/review")
			if review.doc.Find("html").AttrOr("lang", "") != lang || !strings.Contains(string(review.body), want) ||
				strings.Contains(string(review.body), "Administration fee") {
				t.Errorf("review in %s lacks %q: %d %s", lang, want, review.status, review.testid("order-lines").Text())
			}
		}

		// French off, a label given in German only, French on again: the
		// label is listed to translate, on the languages and memberships
		// sections.
		expectRedirect(t, env.post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"en", "de"}, "defaultLanguage": {"en"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		only := url.Values{"name": {"Season one"}, "rules.late-fee.label": {"Late registration"}, "rules.late-fee.labelTexts.de": {"Nachmeldung"}}
		expectRedirect(t, env.post(admin, "/staff/setup/periods/1/texts", only, origin...), "/staff/setup/memberships?done=texts-saved")
		if p := env.get(admin, "/staff/setup/languages"); p.testid("texts-todo").Length() != 0 {
			t.Fatalf("to-do before French is offered: %s", p.testid("texts-todo").Text())
		}
		expectRedirect(t, env.post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"en", "de", "fr"}, "defaultLanguage": {"en"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		for _, sec := range []string{"languages", "memberships"} {
			todo := env.get(admin, "/staff/setup/"+sec).testid("texts-todo")
			if !strings.Contains(todo.Text(), "Late registration") || !strings.Contains(todo.Text(), "Français") {
				t.Errorf("%s section: to-do %q", sec, todo.Text())
			}
		}
	})
}

// TestStaffSetupPriceRulesInWords: the setup's price rules say what each
// rule does in the page's language (the demo's membership fee, early-bird
// discount, ...), not its stored kind and code; the code stays as the
// row's data-code.
func TestStaffSetupPriceRulesInWords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		for _, c := range []struct {
			lang string
			want map[string]string
		}{
			{"en", map[string]string{"adult-fee": "Membership fee", "joining-fee": "Price by kind of member", "early-bird": "Early-bird discount",
				"late-fee": "Late fee", "family": "Family discount", "admin-fee": "Administration fee"}},
			{"de", map[string]string{"adult-fee": "Mitgliedsbeitrag", "early-bird": "Frühbucherrabatt"}},
			{"fr", map[string]string{"adult-fee": "Cotisation", "family": "Réduction famille"}},
		} {
			expectRedirect(t, env.get(admin, "/staff/setup/memberships?lang="+c.lang), "/staff/setup/memberships")
			p := env.get(admin, "/staff/setup/memberships")
			rows := p.testid("rule-row")
			if p.status != http.StatusOK || rows.Length() < len(c.want) {
				t.Fatalf("%s: %d, %d rules", c.lang, p.status, rows.Length())
			}
			for code, want := range c.want {
				if got := p.doc.Find(`[data-testid="rule-row"][data-code="` + code + `"] [data-testid="rule-kind"]`).Text(); got != want {
					t.Errorf("%s: rule %s reads %q, want %q", c.lang, code, got, want)
				}
			}
			text := rows.Text()
			for _, raw := range []string{"MEMBERSHIP_FEE", "MEMBER_TYPE", "EARLY_BIRD", "LATE_FEE", "FAMILY", "ADMIN_FEE", "adult-fee", " · "} {
				if strings.Contains(text, raw) {
					t.Errorf("%s: the rules show %q:\n%s", c.lang, raw, text)
				}
			}
		}
	})
}
