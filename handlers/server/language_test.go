package server_test

import (
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
	"portal/views/lang"
)

// englishCatalogue is every English page text long enough to be telling,
// cut at its placeholders, that German does not share.
func englishCatalogue(t *testing.T) []string {
	t.Helper()
	out, err := lang.EnglishFragments("de", 8)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// englishWords are words no German page text has; the page's data (names,
// the definition's questions and options, order lines) is taken out first.
var englishWords = regexp.MustCompile(`(?i)\b(the|and|your|you|Continue|Back|Error|Question|Step|Please|Choose|Yes|Pay|Check|Start|Born|Available|Registered)\b`)

// pageData collects the texts of a registration that are data, not the
// portal's: people's names, the club's and the period's names, and the
// order lines (membership types and price rules, which staff name). The
// definition's questions and options are not data: the demo definition
// carries them in German.
type pageData map[string]bool

// collect adds the data texts of a page.
func (d pageData) collect(p handlertest.Page) {
	p.Doc.Find(`label span.font-medium, label[for], [data-testid="brand-name"], p.text-brand-800, [data-testid="order-lines"] tbody td:first-child`).Each(func(_ int, s *goquery.Selection) {
		if t := strings.TrimSpace(s.Text()); t != "" {
			d[t] = true
		}
	})
}

// chromeText is the text of a page without its data.
func (d pageData) chromeText(p handlertest.Page) string {
	doc := goquery.CloneDocument(p.Doc)
	doc.Find(`[data-testid="language-switcher"], script, style`).Remove()
	text := handlertest.SpacedText(doc.Find("title")) + " " + handlertest.SpacedText(doc.Find("body"))
	texts := make([]string, 0, len(d))
	for t := range d {
		texts = append(texts, t)
	}
	sort.Slice(texts, func(i, j int) bool { return len(texts[i]) > len(texts[j]) })
	for _, t := range texts {
		text = strings.ReplaceAll(text, t, " ")
	}
	return text
}

// expectGerman fails when a page is not German: its lang, an English text
// of the catalogue or an English word outside the page's data.
func (d pageData) expectGerman(t *testing.T, name string, p handlertest.Page, catalogue []string) {
	t.Helper()
	if l := p.Doc.Find("html").AttrOr("lang", ""); l != "de" {
		t.Errorf("%s: <html lang=%q>, want de", name, l)
	}
	d.collect(p)
	text := d.chromeText(p)
	for _, en := range catalogue {
		if strings.Contains(text, en) {
			t.Errorf("%s shows the English %q", name, en)
		}
	}
	if w := englishWords.FindAllString(text, -1); len(w) > 0 {
		t.Errorf("%s shows English words %v in:\n%s", name, w, strings.Join(strings.Fields(text), " "))
	}
}

// TestRegistrationInGerman walks the registration with German chosen in
// the switcher: every page of the flow, its errors included, is German;
// switching to French keeps the answers.
func TestRegistrationInGerman(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.BrowserLogin("demo")
		catalogue := englishCatalogue(t)
		data := pageData{}

		switched := env.Get(c, "/membership/register/1?lang=de")
		handlertest.ExpectRedirect(t, switched, "/membership/register/1")
		if ck := switched.Header.Get("Set-Cookie"); !strings.Contains(ck, "portal_lang=de") || !strings.Contains(ck, "HttpOnly") {
			t.Fatalf("switch cookie %q", ck)
		}
		overview := env.Get(c, "/membership/register/1")
		data.expectGerman(t, "overview", overview, catalogue)
		if got := overview.TestID("person-status").First().Text(); got != "Verfügbar" {
			t.Fatalf("status %q", got)
		}
		if cur := overview.TestID("lang-de").AttrOr("aria-current", ""); cur != "true" || overview.TestID("lang-fr").AttrOr("href", "") != "/membership/register/1?lang=fr" {
			t.Fatalf("switcher:\n%s", overview.TestID("language-switcher").Text())
		}

		none := env.Post(c, "/membership/register/1/persons", url.Values{})
		data.expectGerman(t, "selection with an error", none, catalogue)
		if !strings.HasPrefix(none.Doc.Find("title").Text(), "Fehler: ") || !strings.Contains(none.TestID("error-summary").Text(), "Es gibt ein Problem") ||
			!strings.Contains(none.TestID("error-summary").Text(), "Wählen Sie mindestens eine Person aus.") {
			t.Fatalf("error page: %q\n%s", none.Doc.Find("title").Text(), none.TestID("error-summary").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")
		data.expectGerman(t, "question 1", env.Get(c, "/membership/register/1/step/1"), catalogue)

		// A validation message of the engine, translated (the phone step's own
		// format message is the definition's text: data).
		step2 := env.Get(c, "/membership/register/1/step/2")
		handlertest.ExpectRedirect(t, step2, "/membership/register/1/step/1")
		env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}})
		empty := env.Post(c, "/membership/register/1/step/2", url.Values{})
		data.expectGerman(t, "question with an error", empty, catalogue)
		if got := empty.Doc.Find("#answer-1-error").Text(); got != "Eine Antwort ist erforderlich." {
			t.Fatalf("required message %q", got)
		}
		if got := empty.TestID("progress").Text(); got != "Frage 2 von 8" {
			t.Fatalf("progress %q", got)
		}
		env.Post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"M"}, "answer-3": {"S"}})

		// Switching to French mid-registration keeps the saved answers.
		handlertest.ExpectRedirect(t, env.Get(c, "/membership/register/1/step/3?lang=fr"), "/membership/register/1/step/3")
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/back", url.Values{"step": {"3"}}), "/membership/register/1/step/2")
		fr := env.Get(c, "/membership/register/1/step/2")
		if fr.Doc.Find("html").AttrOr("lang", "") != "fr" || fr.Doc.Find("#answer-1 option[selected]").AttrOr("value", "") != "M" ||
			fr.TestID("submit").Text() != "Continuer" || fr.TestID("progress").Text() != "Question 2 sur 8" {
			t.Fatalf("French step 2: lang %q, answer %q, button %q", fr.Doc.Find("html").AttrOr("lang", ""),
				fr.Doc.Find("#answer-1 option[selected]").AttrOr("value", ""), fr.TestID("submit").Text())
		}
		handlertest.ExpectRedirect(t, env.Get(c, "/membership/register/1/step/2?lang=de"), "/membership/register/1/step/2")
		env.Post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"M"}, "answer-3": {"S"}})

		// The remaining steps, each submitted as the page shows it, checked on the way.
		answers := map[int]url.Values{3: {"answer-1": {"1"}}, 4: {}, 6: {"answer-3": {"1"}}, 7: {"one": {"1"}}, 8: {"answer-1": {"1"}, "answer-3": {"1"}}}
		for _, step := range []int{3, 4, 6, 7, 8} {
			p := env.Get(c, "/membership/register/1/step/"+strconv.Itoa(step))
			data.expectGerman(t, "question "+strconv.Itoa(step), p, catalogue)
			env.Post(c, "/membership/register/1/step/"+strconv.Itoa(step), answers[step])
		}
		review := env.Get(c, "/membership/register/1/review")
		data.expectGerman(t, "review", review, catalogue)
		if review.TestID("confirm").Text() != "Bestätigen und bezahlen" || !strings.Contains(review.TestID("order-total").Text(), "184,50") {
			t.Fatalf("review: %q %q", review.TestID("confirm").Text(), review.TestID("order-total").Text())
		}
		// The club's own texts (price-rule labels, period name) are German too.
		clubGerman := func(name string, p handlertest.Page) {
			t.Helper()
			body := string(p.Body)
			for _, want := range []string{"Mitgliedschaft Erwachsene – Alex Morgan", "Bearbeitungsgebühr"} {
				if !strings.Contains(body, want) {
					t.Errorf("%s lacks the German price-rule label %q", name, want)
				}
			}
			for _, en := range []string{"Adult membership", "Administration fee", "Early-bird discount"} {
				if strings.Contains(body, en) {
					t.Errorf("%s shows the English price-rule label %q", name, en)
				}
			}
		}
		clubGerman("review", review)
		version := review.Doc.Find(`input[name="version"]`).AttrOr("value", "")
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}}), "/membership/register/1/done")
		done := env.Get(c, "/membership/register/1/done")
		data.expectGerman(t, "done", done, catalogue)
		clubGerman("done", done)
		if !strings.Contains(string(done.Body), "Saison ") {
			t.Errorf("done page lacks the period's German name")
		}

		var language string
		if err := db.NewRaw("SELECT language FROM process_instances WHERE user_key = 'demo'").Scan(t.Context(), &language); err != nil || language != "de" {
			t.Fatalf("the registration's language %q (%v), want de", language, err)
		}

		payURL, _ := url.Parse(done.TestID("pay-now").AttrOr("href", ""))
		failed := env.FollowPayment(c, payURL, "failed")
		data.expectGerman(t, "failed payment", failed, catalogue)
		if !strings.HasPrefix(failed.Doc.Find("title").Text(), "Fehler: Die Zahlung ist fehlgeschlagen") {
			t.Fatalf("failed title %q", failed.Doc.Find("title").Text())
		}
		missing := env.Get(c, "/membership/register/99")
		data.expectGerman(t, "unknown period", missing, catalogue)
	})
}

// TestLanguageFromBrowserAndOrganisation: without a choice, the browser's
// Accept-Language decides, within the organisation's enabled languages;
// a language the organisation does not enable cannot be chosen.
func TestLanguageFromBrowserAndOrganisation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{OrganisationRefresh: -1})
		c := env.BrowserLogin("demo")
		if l := env.Get(c, "/membership/register/1", "Accept-Language", "fr-CH, fr;q=0.9").Doc.Find("html").AttrOr("lang", ""); l != "fr" {
			t.Fatalf("Accept-Language fr: lang %q", l)
		}
		if l := env.Get(c, "/membership/register/1", "Accept-Language", "it").Doc.Find("html").AttrOr("lang", ""); l != "en" {
			t.Fatalf("Accept-Language it: lang %q, want the organisation's default en", l)
		}
		// The organisation offers English and German only.
		if _, err := db.NewUpdate().Model((*engine.Organisation)(nil)).Set("enabled_languages = ?", "en,de").Where("id = 1").Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		p := env.Get(c, "/membership/register/1", "Accept-Language", "fr")
		if l := p.Doc.Find("html").AttrOr("lang", ""); l != "en" || p.TestID("lang-fr").Length() != 0 || p.TestID("lang-de").Length() != 1 {
			t.Fatalf("French not enabled: lang %q, switcher %q", l, p.TestID("language-switcher").Text())
		}
		refused := env.Get(c, "/membership/register/1?lang=fr")
		if refused.Status != http.StatusSeeOther || strings.Contains(refused.Header.Get("Set-Cookie"), "portal_lang") {
			t.Fatalf("a language not enabled was stored: %d %q", refused.Status, refused.Header.Get("Set-Cookie"))
		}
	})
}

// TestAdminEnabledLanguages: the admin API reads and sets an organisation's
// languages; a language the portal does not ship, a repeated one, none, or
// a set without the default language is refused with the field named, and
// changes nothing.
func TestAdminEnabledLanguages(t *testing.T) {
	env := handlertest.NewOrganisationsEnv(t, dbtest.SQLite(t), handlertest.Options{})
	key, _ := env.ApiKey(2, organisation.ScopeWrite)
	var org struct {
		EnabledLanguages []string `json:"enabledLanguages"`
	}
	env.Admin(key, http.MethodGet, "/api/admin/organisation", nil).JSON(t, &org)
	if strings.Join(org.EnabledLanguages, ",") != "en,de,fr" {
		t.Fatalf("default languages %v", org.EnabledLanguages)
	}
	for _, bad := range [][]string{{"en", "it"}, {"de", "de"}, {}} {
		res := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"enabledLanguages": bad})
		e := handlertest.ExpectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/organisation")
		if len(e.Errors) != 1 || e.Errors[0].Field != "enabledLanguages" {
			t.Errorf("%v: errors %+v", bad, e.Errors)
		}
	}
	// The default language (en) must stay one of them.
	res := env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"enabledLanguages": []string{"fr", "de"}})
	if e := handlertest.ExpectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/organisation"); len(e.Errors) != 1 || e.Errors[0].Field != "defaultLanguage" {
		t.Errorf("a default not enabled: errors %+v", e.Errors)
	}
	res = env.Admin(key, http.MethodPatch, "/api/admin/organisation", map[string]any{"enabledLanguages": []string{"fr", "de"}, "defaultLanguage": "fr"})
	res.JSON(t, &org)
	if res.Status != http.StatusOK || strings.Join(org.EnabledLanguages, ",") != "fr,de" {
		t.Fatalf("PATCH: %d %v", res.Status, org.EnabledLanguages)
	}
}

// TestFormAPIInTheBrowsersLanguage: the form API gives the question and
// the person validation messages in the Accept-Language language.
func TestFormAPIInTheBrowsersLanguage(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.NewClient()
	f := env.StartDemo(c)
	res, _ := env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3}})
	if res.Status != http.StatusOK {
		t.Fatalf("selection: %d %s", res.Status, res.Body)
	}
	body := map[string]any{"processId": f.ProcessID, "step": 1, "people": []map[string]any{{"id": 1, "answer": "12"}, {"id": 3, "answer": ""}}}
	bad := env.Do(c, http.MethodPost, "/api/forms/next", body, "Accept-Language", "fr-CH, fr;q=0.9")
	if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(string(bad.Body), "Le numéro de téléphone doit comporter 10 chiffres") ||
		!strings.Contains(string(bad.Body), "Une réponse est obligatoire.") || !strings.Contains(string(bad.Body), `"message":"Certaines réponses ne sont pas valables."`) {
		t.Fatalf("French validation: %d %s", bad.Status, bad.Body)
	}
	if bad.Header.Get("Content-Language") != "fr" {
		t.Errorf("Content-Language %q", bad.Header.Get("Content-Language"))
	}
	body["people"] = []map[string]any{{"id": 1, "answer": "0612345678"}, {"id": 3, "answer": "0687654321"}}
	ok := env.Do(c, http.MethodPost, "/api/forms/next", body, "Accept-Language", "de")
	var next handlertest.Form
	ok.JSON(t, &next)
	if ok.Status != http.StatusOK || next.Question == nil || *next.Question != "Grösse des Vereinsshirts" || len(next.Options) == 0 {
		t.Fatalf("German question 2: %d %s", ok.Status, ok.Body)
	}
}

// A language choice returns to the same page only when the path is a plain
// local one: "//host/" and "/\host/" would send the member to another site.
func TestLanguageChoiceStaysOnSite(t *testing.T) {
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
	c := env.NewClient()
	for path, want := range map[string]string{
		"/membership/register/1?lang=de&x=1": "/membership/register/1?x=1",
		"//evil.example/?lang=de":            "/",
		"/%5Cevil.example/?lang=de":          "/",
		"/%2F%2Fevil.example/?lang=de":       "/",
	} {
		p := env.Get(c, path)
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != want {
			t.Errorf("%s: %d to %q, want 303 to %q", path, p.Status, p.Header.Get("Location"), want)
		}
	}
}
