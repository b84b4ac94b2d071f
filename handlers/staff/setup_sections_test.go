package staff_test

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
	"portal/handlers/handlertest"
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")

		index := env.Get(admin, "/staff/setup")
		if index.Status != http.StatusOK || index.TestID("setup-section-list").Find("li").Length() != len(setupSections) {
			t.Fatalf("section list: %d %s", index.Status, index.TestID("staff-main").Text())
		}
		for _, sec := range setupSections {
			href := index.TestID("setup-link-"+sec.slug).AttrOr("href", "")
			if href != "/staff/setup/"+sec.slug {
				t.Errorf("link to %s: %q", sec.slug, href)
			}
			p := env.Get(admin, href)
			if p.Status != http.StatusOK || p.TestID("setup-section-"+sec.slug).Length() != 1 || p.TestID(sec.form).Length() != 1 {
				t.Fatalf("section %s: %d %s", sec.slug, p.Status, p.TestID("staff-main").Text())
			}
			if cur := p.TestID("setup-sections").Find(`[aria-current=page]`); cur.Length() != 1 || cur.AttrOr("href", "") != href {
				t.Errorf("section %s: the navigation marks %q", sec.slug, cur.AttrOr("href", ""))
			}
			for _, other := range setupSections {
				if other.slug != sec.slug && p.TestID(other.form).Length() != 0 {
					t.Errorf("section %s also shows %s", sec.slug, other.form)
				}
			}
			if p.TestID("setup-sections").Find("a").Length() != len(setupSections) {
				t.Errorf("section %s: the navigation has %d links", sec.slug, p.TestID("setup-sections").Find("a").Length())
			}
		}
		if p := env.Get(admin, "/staff/setup/nope"); p.Status != http.StatusNotFound {
			t.Errorf("an unknown section: %d", p.Status)
		}
		// The staff table has no column of Disable buttons of its own: each
		// is in the role's cell.
		staff := env.Get(admin, "/staff/setup/staff")
		if staff.TestID("staff-table").Find("thead th").Length() != 3 ||
			staff.Doc.Find(`[data-testid=staff-row] td:nth-child(3) [data-testid=staff-disable]`).Length() != 1 {
			t.Errorf("staff table: %s", staff.TestID("staff-table").Text())
		}
	})
}

// TestStaffSetupAPIKeys: an administrator makes an API key, shown once,
// which the admin API accepts; revoking it asks first, then the API
// refuses it. Both are audited; a key without a name is refused by its
// field.
func TestStaffSetupAPIKeys(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		if p := env.Get(admin, "/staff/setup/api-keys"); p.TestID("api-keys-empty").Length() != 1 {
			t.Fatalf("no keys yet: %s", p.TestID("staff-main").Text())
		}
		bad := env.Post(admin, "/staff/setup/api-keys", url.Values{"name": {" "}, "scope": {"write"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-api-key-name").Length() != 1 {
			t.Fatalf("a key without a name: %d %s", bad.Status, bad.TestID("api-key-form").Text())
		}
		made := env.Post(admin, "/staff/setup/api-keys", url.Values{"name": {"Accounting"}, "scope": {"read"}}, origin...)
		key := made.TestID("api-key-value").Text()
		if made.Status != http.StatusOK || !strings.HasPrefix(key, organisation.APIKeyPrefix) || made.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("new key: %d %q", made.Status, key)
		}
		if res := env.Admin(key, http.MethodGet, "/api/admin/organisation", nil); res.Status != http.StatusOK {
			t.Fatalf("the new key on the admin API: %d %s", res.Status, res.Body)
		}
		list := env.Get(admin, "/staff/setup/api-keys")
		row := list.Doc.Find(`[data-testid=api-key-row][data-name=Accounting]`)
		if row.Length() != 1 || strings.Contains(string(list.Body), key) {
			t.Fatalf("the list shows the key or lacks it: %s", list.TestID("api-keys-table").Text())
		}
		revoke := row.Find(`form`).AttrOr("action", "")
		if ask := env.Post(admin, revoke, url.Values{}, origin...); ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("revoking without confirmation: %d", ask.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, revoke, url.Values{"confirmed": {"1"}}, origin...), "/staff/setup/api-keys?done=api-key-revoked")
		if res := env.Admin(key, http.MethodGet, "/api/admin/organisation", nil); res.Status != http.StatusUnauthorized {
			t.Fatalf("a revoked key on the admin API: %d", res.Status)
		}
		if p := env.Get(admin, "/staff/setup/api-keys"); p.Doc.Find(`[data-testid=api-key-row][data-name=Accounting] [data-testid=api-key-revoked]`).Length() != 1 {
			t.Fatalf("revoked key: %s", p.TestID("api-keys-table").Text())
		}
		if env.AuditActions("api_key.create") != 1 || env.AuditActions("api_key.revoke") != 1 {
			t.Errorf("audit: %d create, %d revoke", env.AuditActions("api_key.create"), env.AuditActions("api_key.revoke"))
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{OrganisationRefresh: -1})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		p := env.Get(admin, "/staff/setup/memberships")
		if got := p.Doc.Find("#texts-1-rules-admin-fee-labelTexts-de").AttrOr("value", ""); got != "Bearbeitungsgebühr" {
			t.Fatalf("admin fee in German: %q\n%s", got, p.TestID("period-texts").First().Text())
		}
		form := url.Values{}
		p.Doc.Find(`[data-testid=period-texts][data-period="1"] input`).Each(func(_ int, in *goquery.Selection) {
			form.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
		})
		form.Set("rules.admin-fee.labelTexts.de", "Verwaltungsbeitrag")
		form.Set("rules.admin-fee.labelTexts.fr", "")
		bad := env.Post(admin, "/staff/setup/periods/1/texts", form, origin...)
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.TestID("error-texts-1-rules-admin-fee-labelTexts-fr").Text(), "fr") ||
			bad.Doc.Find("#texts-1-rules-admin-fee-labelTexts-de").AttrOr("value", "") != "Verwaltungsbeitrag" {
			t.Fatalf("a missing French label: %d %s", bad.Status, bad.TestID("setup-problem").Text())
		}
		rules, _ := organisation.Of(env.Engine).PriceRules(t.Context(), 1, 1)
		for _, r := range rules {
			if r.Code == "admin-fee" && r.LabelTexts["de"] != "Bearbeitungsgebühr" {
				t.Fatalf("a refused change was stored: %+v", r)
			}
		}
		form.Set("rules.admin-fee.labelTexts.fr", "Frais de dossier")
		form.Set("nameTexts.de", "Saison der Ruderer")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/periods/1/texts", form, origin...), "/staff/setup/memberships?done=texts-saved")
		if n := env.AuditActions("period.texts"); n != 1 {
			t.Errorf("%d period.texts audit entries", n)
		}

		// A member registering in German, then in French, sees those texts.
		c := env.BrowserLogin("demo")
		env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}})
		answers := map[int]url.Values{1: {"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}, 2: {"answer-1": {"M"}, "answer-3": {"S"}},
			3: {"answer-1": {"1"}}, 4: {}, 6: {"answer-3": {"1"}}, 7: {"one": {"1"}}, 8: {"answer-1": {"1"}, "answer-3": {"1"}}}
		for _, step := range []int{1, 2, 3, 4, 6, 7} {
			env.Post(c, "/membership/register/1/step/"+strconv.Itoa(step), answers[step])
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/8", answers[8]), "/membership/register/1/review")
		for lang, want := range map[string]string{"de": "Verwaltungsbeitrag", "fr": "Frais de dossier"} {
			env.Get(c, "/membership/register/1/review?lang="+lang)
			review := env.Get(c, "/membership/register/1/review")
			if review.Doc.Find("html").AttrOr("lang", "") != lang || !strings.Contains(string(review.Body), want) ||
				strings.Contains(string(review.Body), "Administration fee") {
				t.Errorf("review in %s lacks %q: %d %s", lang, want, review.Status, review.TestID("order-lines").Text())
			}
		}

		// French off, a label given in German only, French on again: the
		// label is listed to translate, on the languages and memberships
		// sections.
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"en", "de"}, "defaultLanguage": {"en"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		only := url.Values{"name": {"Season one"}, "rules.late-fee.label": {"Late registration"}, "rules.late-fee.labelTexts.de": {"Nachmeldung"}}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/periods/1/texts", only, origin...), "/staff/setup/memberships?done=texts-saved")
		if p := env.Get(admin, "/staff/setup/languages"); p.TestID("texts-todo").Length() != 0 {
			t.Fatalf("to-do before French is offered: %s", p.TestID("texts-todo").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/languages", url.Values{"enabledLanguages": {"en", "de", "fr"}, "defaultLanguage": {"en"}}, origin...),
			"/staff/setup/languages?done=languages-saved")
		for _, sec := range []string{"languages", "memberships"} {
			todo := env.Get(admin, "/staff/setup/"+sec).TestID("texts-todo")
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		for _, c := range []struct {
			lang string
			want map[string]string
		}{
			{"en", map[string]string{"adult-fee": "Membership fee", "joining-fee": "Price by kind of member", "early-bird": "Early-bird discount",
				"late-fee": "Late fee", "family": "Family discount", "admin-fee": "Administration fee"}},
			{"de", map[string]string{"adult-fee": "Mitgliedsbeitrag", "early-bird": "Frühbucherrabatt"}},
			{"fr", map[string]string{"adult-fee": "Cotisation", "family": "Réduction famille"}},
		} {
			handlertest.ExpectRedirect(t, env.Get(admin, "/staff/setup/memberships?lang="+c.lang), "/staff/setup/memberships")
			p := env.Get(admin, "/staff/setup/memberships")
			rows := p.TestID("rule-row")
			if p.Status != http.StatusOK || rows.Length() < len(c.want) {
				t.Fatalf("%s: %d, %d rules", c.lang, p.Status, rows.Length())
			}
			for code, want := range c.want {
				if got := p.Doc.Find(`[data-testid="rule-row"][data-code="` + code + `"] [data-testid="rule-kind"]`).Text(); got != want {
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
