package members_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// walkToReview answers the demo registration on the member pages up to
// the review page.
func walkToReview(env *handlertest.Env, c *http.Client) handlertest.Page {
	env.TB.Helper()
	handlertest.ExpectRedirect(env.TB, env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")
	for _, s := range []struct {
		step string
		form url.Values
	}{
		{"1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}},
		{"2", url.Values{"answer-1": {"M"}, "answer-3": {"S"}}},
		{"3", url.Values{"answer-1": {"1"}}},
		{"4", url.Values{}},
		{"6", url.Values{"answer-3": {"1"}}},
		{"7", url.Values{"one": {"1"}}},
		{"8", url.Values{"answer-1": {"1"}, "answer-3": {"1"}}},
	} {
		if p := env.Post(c, "/membership/register/1/step/"+s.step, s.form); p.Status != http.StatusSeeOther {
			env.TB.Fatalf("step %s: %d", s.step, p.Status)
		}
	}
	return env.Get(c, "/membership/register/1/review")
}

// clubMethods gives organisation 1 the test gateway (default) and bank
// transfer to its own account.
func clubMethods(t *testing.T, env *handlertest.Env, methods ...string) {
	t.Helper()
	if _, err := settings.Of(env.Engine).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
		BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &methods}); err != nil {
		t.Fatal(err)
	}
}

// TestReviewOffersPaymentMethods: with one method the review page asks
// nothing (as before methods); with several a radio group offers them, the
// default checked; the member's choice is stored on the order and its
// attempt; a method the club does not offer is refused on the review page
// and nothing is committed; the pay link offers the methods again and a
// new choice goes to its checkout.
func TestReviewOffersPaymentMethods(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.BrowserLogin("demo")
		review := walkToReview(env, c)
		if review.TestID("payment-methods").Length() != 0 || review.TestID("confirm").Length() != 1 {
			t.Fatalf("one method: the review page must not ask:\n%s", review.Body)
		}

		clubMethods(t, env, "test", "bank_transfer")
		review = env.Get(c, "/membership/register/1/review")
		radios := review.TestID("payment-methods").Find(`input[type="radio"][name="paymentMethod"]`)
		if radios.Length() != 2 || review.TestID("payment-methods").Find("legend").Text() != "How would you like to pay?" {
			t.Fatalf("two methods: radios %d:\n%s", radios.Length(), review.Body)
		}
		if _, checked := review.TestID("payment-method-test").Attr("checked"); !checked {
			t.Fatalf("the default method is not checked")
		}
		if id, _ := review.TestID("payment-method-bank_transfer").Attr("id"); review.Doc.Find(`label[for="`+id+`"]`).Length() != 1 {
			t.Fatalf("a method has no label")
		}
		version := review.Doc.Find(`input[name="version"]`).AttrOr("value", "")
		bad := env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"stripe"}})
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("notice").Length() == 0 {
			t.Fatalf("a method not offered: %d\n%s", bad.Status, bad.Body)
		}
		var orders []engine.Order
		if err := db.NewSelect().Model(&orders).Scan(t.Context()); err != nil || len(orders) != 0 {
			t.Fatalf("orders after a refused method: %d %v", len(orders), err)
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"bank_transfer"}}),
			"/membership/register/1/done")
		if err := db.NewSelect().Model(&orders).Scan(t.Context()); err != nil || len(orders) != 1 || orders[0].PaymentMethod != "bank_transfer" {
			t.Fatalf("order %+v %v", orders, err)
		}
		var attempts []engine.Payment
		if err := db.NewSelect().Model(&attempts).Order("id ASC").Scan(t.Context()); err != nil || len(attempts) != 1 || attempts[0].Provider != "bank_transfer" {
			t.Fatalf("attempts %+v %v", attempts, err)
		}
		// The done page shows the transfer the member chose, although the
		// club's default is another method.
		if done := env.Get(c, "/membership/register/1/done"); done.TestID("bank-transfer").Length() != 1 {
			t.Fatalf("the done page does not show the chosen bank transfer:\n%s", done.Body)
		}

		// The pay link offers the methods again, the order's checked.
		pay := env.Get(c, "/pay/"+orders[0].PayReference)
		if pay.Status != http.StatusOK || pay.TestID("pay-choose").Length() != 1 || pay.TestID("pay-total").Text() != "EUR 184.50" {
			t.Fatalf("pay link: %d\n%s", pay.Status, pay.Body)
		}
		if _, checked := pay.TestID("payment-method-bank_transfer").Attr("checked"); !checked {
			t.Fatalf("the order's method is not checked on the pay link")
		}
		// Without a session too: the link travels in e-mails.
		if anon := env.Get(env.NewClient(), "/pay/"+orders[0].PayReference); anon.Status != http.StatusOK || anon.TestID("pay-choose").Length() != 1 {
			t.Fatalf("pay link without a session: %d", anon.Status)
		}
		if res := env.Post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"paypal"}}); res.Status != http.StatusBadRequest {
			t.Fatalf("an unknown method on the pay link: %d", res.Status)
		}
		again := env.Post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"test"}})
		if again.Status != http.StatusSeeOther || !strings.Contains(again.Header.Get("Location"), "/dev/pay/") {
			t.Fatalf("choose the test gateway: %d to %q", again.Status, again.Header.Get("Location"))
		}
		if err := db.NewSelect().Model(&attempts).Order("id ASC").Scan(t.Context()); err != nil || len(attempts) != 2 ||
			attempts[0].Status != engine.PaymentCancelled || attempts[1].Provider != "test" {
			t.Fatalf("attempts after the new choice %+v %v", attempts, err)
		}

		// Direct debit: the pay link is the portal's own page (never a
		// redirect to itself), naming the amount, creditor and identifier.
		if _, err := settings.Of(env.Engine).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{Methods: &[]string{"test", "direct_debit"},
			DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		debit := env.Post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"direct_debit"}})
		if debit.Status != http.StatusOK || debit.TestID("pay-by-debit").Length() != 1 || debit.TestID("debit-creditor-id").Text() != "DE98ZZZ09999999999" ||
			debit.TestID("debit-total").Text() != "EUR 184.50" || debit.TestID("debit-creditor").Text() != "TV Demo 1848 e.V." {
			t.Fatalf("direct debit on the pay link: %d\n%s", debit.Status, debit.Body)
		}
		if err := db.NewSelect().Model(&attempts).Order("id ASC").Scan(t.Context()); err != nil || len(attempts) != 3 ||
			attempts[1].Status != engine.PaymentCancelled || attempts[2].Provider != "direct_debit" || attempts[2].Status != engine.PaymentPending {
			t.Fatalf("attempts after choosing direct debit %+v %v", attempts, err)
		}
	})
}

// TestFormAPIPaymentMethods: the FormDTO lists the club's methods; the
// last step's paymentMethod is checked (422 in the spec's shape, nothing
// committed) and stored; the admin API reads and writes the methods and
// the direct-debit settings, refusing an invalid Creditor Identifier.
func TestFormAPIPaymentMethods(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		res := env.Admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "direct_debit"},
			"bankCreditorName": "TV Demo 1848 e.V.", "bankIban": "DE89 3704 0044 0532 0130 00", "debitCreditorId": "DE97ZZZ09999999999"})
		var problem struct {
			Fields []struct{ Field, Message string } `json:"errors"`
		}
		res.JSON(t, &problem)
		if res.Status != http.StatusUnprocessableEntity || len(problem.Fields) != 1 || problem.Fields[0].Field != "debitCreditorId" {
			t.Fatalf("invalid creditor identifier: %d %s", res.Status, res.Body)
		}
		if get := env.Admin(key, http.MethodGet, "/api/admin/payment-settings", nil); !strings.Contains(string(get.Body), `"methods":[]`) {
			t.Fatalf("a refused change stored something: %s", get.Body)
		}
		res = env.Admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "bank_transfer"},
			"bankCreditorName": "TV Demo 1848 e.V.", "bankIban": "DE89 3704 0044 0532 0130 00", "debitCreditorId": "DE98ZZZ09999999999",
			"debitPrenotificationDays": 7})
		var settings struct {
			Provider                 string   `json:"provider"`
			Methods                  []string `json:"methods"`
			DebitCreditorID          string   `json:"debitCreditorId"`
			DebitPrenotificationDays int      `json:"debitPrenotificationDays"`
			DebitFileVersion         string   `json:"debitFileVersion"`
		}
		res.JSON(t, &settings)
		if res.Status != http.StatusOK || settings.Provider != "test" || !slices.Equal(settings.Methods, []string{"test", "bank_transfer"}) ||
			settings.DebitCreditorID != "DE98ZZZ09999999999" || settings.DebitPrenotificationDays != 7 || settings.DebitFileVersion != "pain.008.001.08" {
			t.Fatalf("settings: %d %s", res.Status, res.Body)
		}

		c := env.NewClient()
		f := env.StartDemo(c)
		res, f = env.Next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
		var dto struct {
			PaymentMethods []string `json:"paymentMethods"`
		}
		if res.JSON(t, &dto); dto.PaymentMethods == nil || len(dto.PaymentMethods) != 0 {
			t.Fatalf("FormDTO.paymentMethods before the last question %v: %s", dto.PaymentMethods, res.Body)
		}
		for _, step := range handlertest.DemoPath[:len(handlertest.DemoPath)-1] {
			if res, f = env.Next(c, f.ProcessID, step, handlertest.DemoAnswers[step]); res.Status != http.StatusOK {
				t.Fatalf("step %d: %d", step, res.Status)
			}
		}
		if res.JSON(t, &dto); !slices.Equal(dto.PaymentMethods, []string{"test", "bank_transfer"}) {
			t.Fatalf("FormDTO.paymentMethods on the last question %v: %s", dto.PaymentMethods, res.Body)
		}
		last := handlertest.DemoPath[len(handlertest.DemoPath)-1]
		body := map[string]any{"processId": f.ProcessID, "step": last, "people": handlertest.DemoAnswers[last], "paymentMethod": "stripe"}
		res = env.Do(c, http.MethodPost, "/api/forms/next", body)
		problem.Fields = nil
		res.JSON(t, &problem)
		if res.Status != http.StatusBadRequest || len(problem.Fields) != 1 || problem.Fields[0].Field != "paymentMethod" {
			t.Fatalf("a method not offered: %d %s", res.Status, res.Body)
		}
		body["paymentMethod"] = "bank_transfer"
		if res = env.Do(c, http.MethodPost, "/api/forms/next", body); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"processState":"DONE"`) {
			t.Fatalf("commit with bank transfer: %d %s", res.Status, res.Body)
		}
		var order engine.Order
		if err := db.NewSelect().Model(&order).Scan(t.Context()); err != nil || order.PaymentMethod != "bank_transfer" {
			t.Fatalf("order %+v %v", order, err)
		}
	})
}

// TestDirectDebitOnlyInEuroPages: a club whose season is in Swiss francs
// (as the demo tennis club's is) cannot offer direct debit: the admin API
// answers 422 naming methods in the spec's error shape and the setup page
// shows the refusal at the methods, nothing changed; the review page of a
// club that offered it before its season moved to CHF does not offer it,
// and a confirm that names it anyway commits nothing.
func TestDirectDebitOnlyInEuroPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		clubMethods(t, env.Env, "test", "bank_transfer")
		if _, err := db.NewUpdate().Model((*engine.MembershipPeriod)(nil)).Set("currency = ?", "CHF").
			Where("organisation_id = ? AND status = ?", 1, engine.PeriodOpen).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		res := env.Admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "direct_debit"},
			"debitCreditorId": "DE98ZZZ09999999999"})
		var problem struct {
			Fields []struct{ Field, Message string } `json:"errors"`
		}
		res.JSON(t, &problem)
		if res.Status != http.StatusUnprocessableEntity || len(problem.Fields) != 1 || problem.Fields[0].Field != "methods" ||
			!strings.Contains(problem.Fields[0].Message, "EUR") || !strings.Contains(problem.Fields[0].Message, "CHF") {
			t.Fatalf("direct debit for a club in CHF through the admin API: %d %s", res.Status, res.Body)
		}
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		form := url.Values{"methods": {"bank_transfer", "direct_debit"}, "defaultMethod": {"bank_transfer"}, "debitCreditorId": {"DE98ZZZ09999999999"},
			"debitPrenotificationDays": {"14"}}
		bad := env.Post(admin, "/staff/setup/payment-methods", form, "Origin", env.Server.URL)
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.TestID("error-pm-methods").Text(), "CHF") ||
			!bad.TestID("pm-method-direct_debit").Is("[checked]") {
			t.Fatalf("direct debit for a club in CHF on the setup page: %d\n%s", bad.Status, bad.TestID("payment-methods-section").Text())
		}
		if v, err := settings.Of(env.Engine).PaymentSettings(ctx, 1); err != nil || !slices.Equal(v.Methods, []string{"test", "bank_transfer"}) ||
			v.DebitCreditorID != "" || env.AuditActions("payment_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v %v", v, err)
		}

		// Offered before the rule: the members of the CHF season do not see it.
		if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("methods = ?", "test,bank_transfer,direct_debit").
			Set("debit_creditor_id = ?", "DE98ZZZ09999999999").Where("organisation_id = ?", 1).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c := env.BrowserLogin("demo")
		review := walkToReview(env.Env, c)
		if radios := review.TestID("payment-methods").Find(`input[type="radio"]`); radios.Length() != 2 || review.TestID("payment-method-direct_debit").Length() != 0 {
			t.Fatalf("the review page of a CHF season offers %d methods:\n%s", radios.Length(), review.TestID("payment-methods").Text())
		}
		version := review.Doc.Find(`input[name="version"]`).AttrOr("value", "")
		if p := env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"direct_debit"}}); p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("direct debit named at the confirm of a CHF season: %d", p.Status)
		}
		if n, err := db.NewSelect().Model((*engine.Order)(nil)).Count(ctx); err != nil || n != 0 {
			t.Fatalf("orders after a refused method: %d %v", n, err)
		}
	})
}

// TestGiveMandatePage: the direct-debit page shows the mandate form with
// the rulebook's text in the page's language (German here); a missing
// consent, an invalid IBAN and a Swiss account without its BIC are named
// at their fields, the input kept, nothing stored; a valid mandate is
// stored and the pay link then shows
// its reference and the masked account, and staff see it on the
// registration page with its text as signed.
func TestGiveMandatePage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		if _, err := settings.Of(env.Engine).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
			BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.NewClient()
		f := env.CompleteDemo(c)
		if f.PaymentURL == nil {
			t.Fatal("no pay link")
		}
		u, _ := url.Parse(*f.PaymentURL)
		de := []string{"Accept-Language", "de"}
		page := env.Post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}}, de...)
		if page.Status != http.StatusOK || page.TestID("mandate").Length() != 1 || !strings.Contains(page.TestID("mandate-text").Text(), "acht Wochen") ||
			!strings.Contains(page.TestID("mandate-text").Text(), "DE98ZZZ09999999999") || page.TestID("mandate-consent").Length() != 1 {
			t.Fatalf("debit page: %d\n%s", page.Status, page.Body)
		}
		action := page.Doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		bad := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE00 3704 0044 0532 0130 00"}}, de...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-mandate-iban").Length() != 1 || bad.Doc.Find("#mandate-holder").AttrOr("value", "") != "Alex Example" ||
			!strings.Contains(bad.TestID("error-summary").Text(), "Häkchen") {
			t.Fatalf("refused mandate: %d\n%s", bad.Status, bad.Body)
		}
		// An account outside the EEA needs the bank's BIC: asked at its field.
		swiss := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"CH93 0076 2011 6238 5295 7"}, "consent": {"1"}}, de...)
		if swiss.Status != http.StatusUnprocessableEntity || swiss.TestID("error-mandate-bic").Length() != 1 ||
			swiss.Doc.Find("#mandate-bic").AttrOr("aria-invalid", "") != "true" || swiss.TestID("error-mandate-iban").Length() != 0 ||
			swiss.Doc.Find("#mandate-iban").AttrOr("value", "") != "CH93 0076 2011 6238 5295 7" {
			t.Fatalf("a Swiss account without its BIC: %d\n%s", swiss.Status, swiss.Body)
		}
		if n, _ := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("a refused mandate was stored")
		}
		ok := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}, "consent": {"1"}}, de...)
		if ok.Status != http.StatusSeeOther {
			t.Fatalf("mandate: %d\n%s", ok.Status, ok.Body)
		}
		var m directdebit.DebitMandate
		if err := db.NewSelect().Model(&m).Scan(t.Context()); err != nil || m.Language != "de" || !strings.Contains(m.Text, m.Reference) {
			t.Fatalf("stored mandate %+v %v", m, err)
		}
		given := env.Get(c, u.Path, de...)
		if given.TestID("mandate-reference").Text() != m.Reference || given.TestID("mandate-account").Text() != "DE89 … 3000" || given.TestID("mandate-sign").Length() != 0 {
			t.Fatalf("after the mandate:\n%s", given.Body)
		}
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		detail := env.Get(viewer, "/staff/registrations/"+f.ProcessID)
		if detail.TestID("detail-mandate-reference").Text() != m.Reference || detail.TestID("detail-mandate-iban").Text() != "DE89370400440532013000" ||
			detail.TestID("detail-mandate-text").Text() != m.Text {
			t.Fatalf("staff registration page: %d\n%s", detail.Status, detail.TestID("detail-mandate").Text())
		}
	})
}

// TestMandateConsentAtItsField: a mandate given without the consent is
// refused with the problem at the box (aria-invalid="true", described by
// the message above it, in the page's language) and in the summary
// linked to it, under a title that starts with "Error:" as every refused
// member form's does; the typed account stays, nothing is stored.
func TestMandateConsentAtItsField(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		if _, err := settings.Of(env.Engine).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."),
			BankIBAN: handlertest.StringPtr("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: handlertest.StringPtr("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.NewClient()
		f := env.CompleteDemo(c)
		if f.PaymentURL == nil {
			t.Fatal("no pay link")
		}
		u, _ := url.Parse(*f.PaymentURL)
		page := env.Post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}})
		if title := page.Doc.Find("title").Text(); strings.HasPrefix(title, "Error:") {
			t.Fatalf("the form before any refusal: %q", title)
		}
		action := page.Doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		for _, c2 := range []struct{ lang, title, msg string }{
			{"en", "Error: ", "Tick the box to give the mandate."},
			{"de", "Fehler: ", "Setzen Sie das Häkchen, um das Mandat zu erteilen."},
		} {
			bad := env.Post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}}, "Accept-Language", c2.lang)
			box := bad.Doc.Find("#mandate-consent")
			if bad.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(bad.Doc.Find("title").Text(), c2.title) {
				t.Fatalf("%s: refused mandate: %d, title %q", c2.lang, bad.Status, bad.Doc.Find("title").Text())
			}
			if box.AttrOr("aria-invalid", "") != "true" || !strings.Contains(box.AttrOr("aria-describedby", ""), "mandate-consent-error") {
				t.Errorf("%s: the box: aria-invalid %q, described by %q", c2.lang, box.AttrOr("aria-invalid", ""), box.AttrOr("aria-describedby", ""))
			}
			if msg := bad.Doc.Find("#mandate-consent-error"); msg.Text() != c2.msg || msg.AttrOr("data-testid", "") != "error-mandate-consent" {
				t.Errorf("%s: the message at the box: %q", c2.lang, msg.Text())
			}
			if a := bad.TestID("error-summary").Find(`a[href="#mandate-consent"]`); a.Text() != c2.msg {
				t.Errorf("%s: the summary: %q", c2.lang, bad.TestID("error-summary").Text())
			}
			if bad.Doc.Find("#mandate-iban").AttrOr("value", "") != "DE89 3704 0044 0532 0130 00" {
				t.Errorf("%s: the IBAN typed was lost", c2.lang)
			}
		}
		if n, _ := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("a refused mandate was stored")
		}
	})
}
