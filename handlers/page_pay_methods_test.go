package handlers_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"portal/engine/payment/settings"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/staff"
)

// walkToReview answers the demo registration on the member pages up to
// the review page.
func (env *testEnv) walkToReview(c *http.Client) page {
	env.t.Helper()
	expectRedirect(env.t, env.post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")
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
		if p := env.post(c, "/membership/register/1/step/"+s.step, s.form); p.status != http.StatusSeeOther {
			env.t.Fatalf("step %s: %d", s.step, p.status)
		}
	}
	return env.get(c, "/membership/register/1/review")
}

// clubMethods gives organisation 1 the test gateway (default) and bank
// transfer to its own account.
func clubMethods(t *testing.T, env *testEnv, methods ...string) {
	t.Helper()
	if _, err := settings.Of(env.svc).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: str("TV Demo 1848 e.V."),
		BankIBAN: str("DE89370400440532013000"), Methods: &methods}); err != nil {
		t.Fatal(err)
	}
}

func str(s string) *string { return &s }

// TestReviewOffersPaymentMethods: with one method the review page asks
// nothing (as before methods); with several a radio group offers them, the
// default checked; the member's choice is stored on the order and its
// attempt; a method the club does not offer is refused on the review page
// and nothing is committed; the pay link offers the methods again and a
// new choice goes to its checkout.
func TestReviewOffersPaymentMethods(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnv(t, db)
		c := env.browserLogin("demo")
		review := env.walkToReview(c)
		if review.testid("payment-methods").Length() != 0 || review.testid("confirm").Length() != 1 {
			t.Fatalf("one method: the review page must not ask:\n%s", review.body)
		}

		clubMethods(t, env, "test", "bank_transfer")
		review = env.get(c, "/membership/register/1/review")
		radios := review.testid("payment-methods").Find(`input[type="radio"][name="paymentMethod"]`)
		if radios.Length() != 2 || review.testid("payment-methods").Find("legend").Text() != "How would you like to pay?" {
			t.Fatalf("two methods: radios %d:\n%s", radios.Length(), review.body)
		}
		if _, checked := review.testid("payment-method-test").Attr("checked"); !checked {
			t.Fatalf("the default method is not checked")
		}
		if id, _ := review.testid("payment-method-bank_transfer").Attr("id"); review.doc.Find(`label[for="`+id+`"]`).Length() != 1 {
			t.Fatalf("a method has no label")
		}
		version := review.doc.Find(`input[name="version"]`).AttrOr("value", "")
		bad := env.post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"stripe"}})
		if bad.status != http.StatusUnprocessableEntity || bad.testid("notice").Length() == 0 {
			t.Fatalf("a method not offered: %d\n%s", bad.status, bad.body)
		}
		var orders []engine.Order
		if err := db.NewSelect().Model(&orders).Scan(t.Context()); err != nil || len(orders) != 0 {
			t.Fatalf("orders after a refused method: %d %v", len(orders), err)
		}
		expectRedirect(t, env.post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"bank_transfer"}}),
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
		if done := env.get(c, "/membership/register/1/done"); done.testid("bank-transfer").Length() != 1 {
			t.Fatalf("the done page does not show the chosen bank transfer:\n%s", done.body)
		}

		// The pay link offers the methods again, the order's checked.
		pay := env.get(c, "/pay/"+orders[0].PayReference)
		if pay.status != http.StatusOK || pay.testid("pay-choose").Length() != 1 || pay.testid("pay-total").Text() != "EUR 184.50" {
			t.Fatalf("pay link: %d\n%s", pay.status, pay.body)
		}
		if _, checked := pay.testid("payment-method-bank_transfer").Attr("checked"); !checked {
			t.Fatalf("the order's method is not checked on the pay link")
		}
		// Without a session too: the link travels in e-mails.
		if anon := env.get(env.newClient(), "/pay/"+orders[0].PayReference); anon.status != http.StatusOK || anon.testid("pay-choose").Length() != 1 {
			t.Fatalf("pay link without a session: %d", anon.status)
		}
		if res := env.post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"paypal"}}); res.status != http.StatusBadRequest {
			t.Fatalf("an unknown method on the pay link: %d", res.status)
		}
		again := env.post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"test"}})
		if again.status != http.StatusSeeOther || !strings.Contains(again.header.Get("Location"), "/dev/pay/") {
			t.Fatalf("choose the test gateway: %d to %q", again.status, again.header.Get("Location"))
		}
		if err := db.NewSelect().Model(&attempts).Order("id ASC").Scan(t.Context()); err != nil || len(attempts) != 2 ||
			attempts[0].Status != engine.PaymentCancelled || attempts[1].Provider != "test" {
			t.Fatalf("attempts after the new choice %+v %v", attempts, err)
		}

		// Direct debit: the pay link is the portal's own page (never a
		// redirect to itself), naming the amount, creditor and identifier.
		if _, err := settings.Of(env.svc).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{Methods: &[]string{"test", "direct_debit"},
			DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		debit := env.post(c, "/pay/"+orders[0].PayReference, url.Values{"paymentMethod": {"direct_debit"}})
		if debit.status != http.StatusOK || debit.testid("pay-by-debit").Length() != 1 || debit.testid("debit-creditor-id").Text() != "DE98ZZZ09999999999" ||
			debit.testid("debit-total").Text() != "EUR 184.50" || debit.testid("debit-creditor").Text() != "TV Demo 1848 e.V." {
			t.Fatalf("direct debit on the pay link: %d\n%s", debit.status, debit.body)
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
		env := newEnv(t, db)
		key, _ := env.apiKey(1, organisation.ScopeWrite)
		res := env.admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "direct_debit"},
			"bankCreditorName": "TV Demo 1848 e.V.", "bankIban": "DE89 3704 0044 0532 0130 00", "debitCreditorId": "DE97ZZZ09999999999"})
		var problem struct {
			Fields []struct{ Field, Message string } `json:"errors"`
		}
		res.json(t, &problem)
		if res.status != http.StatusUnprocessableEntity || len(problem.Fields) != 1 || problem.Fields[0].Field != "debitCreditorId" {
			t.Fatalf("invalid creditor identifier: %d %s", res.status, res.body)
		}
		if get := env.admin(key, http.MethodGet, "/api/admin/payment-settings", nil); !strings.Contains(string(get.body), `"methods":[]`) {
			t.Fatalf("a refused change stored something: %s", get.body)
		}
		res = env.admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "bank_transfer"},
			"bankCreditorName": "TV Demo 1848 e.V.", "bankIban": "DE89 3704 0044 0532 0130 00", "debitCreditorId": "DE98ZZZ09999999999",
			"debitPrenotificationDays": 7})
		var settings struct {
			Provider                 string   `json:"provider"`
			Methods                  []string `json:"methods"`
			DebitCreditorID          string   `json:"debitCreditorId"`
			DebitPrenotificationDays int      `json:"debitPrenotificationDays"`
			DebitFileVersion         string   `json:"debitFileVersion"`
		}
		res.json(t, &settings)
		if res.status != http.StatusOK || settings.Provider != "test" || !slices.Equal(settings.Methods, []string{"test", "bank_transfer"}) ||
			settings.DebitCreditorID != "DE98ZZZ09999999999" || settings.DebitPrenotificationDays != 7 || settings.DebitFileVersion != "pain.008.001.08" {
			t.Fatalf("settings: %d %s", res.status, res.body)
		}

		c := env.newClient()
		f := env.startDemo(c)
		res, f = env.next(c, f.ProcessID, 0, []map[string]any{{"id": 1}, {"id": 3, "selected": true}})
		var dto struct {
			PaymentMethods []string `json:"paymentMethods"`
		}
		if res.json(t, &dto); dto.PaymentMethods == nil || len(dto.PaymentMethods) != 0 {
			t.Fatalf("FormDTO.paymentMethods before the last question %v: %s", dto.PaymentMethods, res.body)
		}
		for _, step := range demoPath[:len(demoPath)-1] {
			if res, f = env.next(c, f.ProcessID, step, demoAnswers[step]); res.status != http.StatusOK {
				t.Fatalf("step %d: %d", step, res.status)
			}
		}
		if res.json(t, &dto); !slices.Equal(dto.PaymentMethods, []string{"test", "bank_transfer"}) {
			t.Fatalf("FormDTO.paymentMethods on the last question %v: %s", dto.PaymentMethods, res.body)
		}
		last := demoPath[len(demoPath)-1]
		body := map[string]any{"processId": f.ProcessID, "step": last, "people": demoAnswers[last], "paymentMethod": "stripe"}
		res = env.do(c, http.MethodPost, "/api/forms/next", body)
		problem.Fields = nil
		res.json(t, &problem)
		if res.status != http.StatusBadRequest || len(problem.Fields) != 1 || problem.Fields[0].Field != "paymentMethod" {
			t.Fatalf("a method not offered: %d %s", res.status, res.body)
		}
		body["paymentMethod"] = "bank_transfer"
		if res = env.do(c, http.MethodPost, "/api/forms/next", body); res.status != http.StatusOK || !strings.Contains(string(res.body), `"processState":"DONE"`) {
			t.Fatalf("commit with bank transfer: %d %s", res.status, res.body)
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
		env := newStaffEnv(t, db, envOptions{})
		ctx := t.Context()
		clubMethods(t, env.testEnv, "test", "bank_transfer")
		if _, err := db.NewUpdate().Model((*engine.MembershipPeriod)(nil)).Set("currency = ?", "CHF").
			Where("organisation_id = ? AND status = ?", 1, engine.PeriodOpen).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		key, _ := env.apiKey(1, organisation.ScopeWrite)
		res := env.admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"methods": []string{"test", "direct_debit"},
			"debitCreditorId": "DE98ZZZ09999999999"})
		var problem struct {
			Fields []struct{ Field, Message string } `json:"errors"`
		}
		res.json(t, &problem)
		if res.status != http.StatusUnprocessableEntity || len(problem.Fields) != 1 || problem.Fields[0].Field != "methods" ||
			!strings.Contains(problem.Fields[0].Message, "EUR") || !strings.Contains(problem.Fields[0].Message, "CHF") {
			t.Fatalf("direct debit for a club in CHF through the admin API: %d %s", res.status, res.body)
		}
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		form := url.Values{"methods": {"bank_transfer", "direct_debit"}, "defaultMethod": {"bank_transfer"}, "debitCreditorId": {"DE98ZZZ09999999999"},
			"debitPrenotificationDays": {"14"}}
		bad := env.post(admin, "/staff/setup/payment-methods", form, "Origin", env.srv.URL)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.testid("error-pm-methods").Text(), "CHF") ||
			!bad.testid("pm-method-direct_debit").Is("[checked]") {
			t.Fatalf("direct debit for a club in CHF on the setup page: %d\n%s", bad.status, bad.testid("payment-methods-section").Text())
		}
		if v, err := settings.Of(env.svc).PaymentSettings(ctx, 1); err != nil || !slices.Equal(v.Methods, []string{"test", "bank_transfer"}) ||
			v.DebitCreditorID != "" || env.auditActions("payment_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v %v", v, err)
		}

		// Offered before the rule: the members of the CHF season do not see it.
		if _, err := db.NewUpdate().Model((*payment.PaymentSettings)(nil)).Set("methods = ?", "test,bank_transfer,direct_debit").
			Set("debit_creditor_id = ?", "DE98ZZZ09999999999").Where("organisation_id = ?", 1).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		c := env.browserLogin("demo")
		review := env.walkToReview(c)
		if radios := review.testid("payment-methods").Find(`input[type="radio"]`); radios.Length() != 2 || review.testid("payment-method-direct_debit").Length() != 0 {
			t.Fatalf("the review page of a CHF season offers %d methods:\n%s", radios.Length(), review.testid("payment-methods").Text())
		}
		version := review.doc.Find(`input[name="version"]`).AttrOr("value", "")
		if p := env.post(c, "/membership/register/1/confirm", url.Values{"version": {version}, "paymentMethod": {"direct_debit"}}); p.status != http.StatusUnprocessableEntity {
			t.Fatalf("direct debit named at the confirm of a CHF season: %d", p.status)
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
		env := newStaffEnv(t, db, envOptions{})
		if _, err := settings.Of(env.svc).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: str("TV Demo 1848 e.V."),
			BankIBAN: str("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.newClient()
		f := env.completeDemo(c)
		if f.PaymentURL == nil {
			t.Fatal("no pay link")
		}
		u, _ := url.Parse(*f.PaymentURL)
		de := []string{"Accept-Language", "de"}
		page := env.post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}}, de...)
		if page.status != http.StatusOK || page.testid("mandate").Length() != 1 || !strings.Contains(page.testid("mandate-text").Text(), "acht Wochen") ||
			!strings.Contains(page.testid("mandate-text").Text(), "DE98ZZZ09999999999") || page.testid("mandate-consent").Length() != 1 {
			t.Fatalf("debit page: %d\n%s", page.status, page.body)
		}
		action := page.doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		bad := env.post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE00 3704 0044 0532 0130 00"}}, de...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-mandate-iban").Length() != 1 || bad.doc.Find("#mandate-holder").AttrOr("value", "") != "Alex Example" ||
			!strings.Contains(bad.testid("error-summary").Text(), "Häkchen") {
			t.Fatalf("refused mandate: %d\n%s", bad.status, bad.body)
		}
		// An account outside the EEA needs the bank's BIC: asked at its field.
		swiss := env.post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"CH93 0076 2011 6238 5295 7"}, "consent": {"1"}}, de...)
		if swiss.status != http.StatusUnprocessableEntity || swiss.testid("error-mandate-bic").Length() != 1 ||
			swiss.doc.Find("#mandate-bic").AttrOr("aria-invalid", "") != "true" || swiss.testid("error-mandate-iban").Length() != 0 ||
			swiss.doc.Find("#mandate-iban").AttrOr("value", "") != "CH93 0076 2011 6238 5295 7" {
			t.Fatalf("a Swiss account without its BIC: %d\n%s", swiss.status, swiss.body)
		}
		if n, _ := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("a refused mandate was stored")
		}
		ok := env.post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}, "consent": {"1"}}, de...)
		if ok.status != http.StatusSeeOther {
			t.Fatalf("mandate: %d\n%s", ok.status, ok.body)
		}
		var m directdebit.DebitMandate
		if err := db.NewSelect().Model(&m).Scan(t.Context()); err != nil || m.Language != "de" || !strings.Contains(m.Text, m.Reference) {
			t.Fatalf("stored mandate %+v %v", m, err)
		}
		given := env.get(c, u.Path, de...)
		if given.testid("mandate-reference").Text() != m.Reference || given.testid("mandate-account").Text() != "DE89 … 3000" || given.testid("mandate-sign").Length() != 0 {
			t.Fatalf("after the mandate:\n%s", given.body)
		}
		env.addStaff("viewer@example.org", staff.RoleViewer)
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")
		detail := env.get(viewer, "/staff/registrations/"+f.ProcessID)
		if detail.testid("detail-mandate-reference").Text() != m.Reference || detail.testid("detail-mandate-iban").Text() != "DE89370400440532013000" ||
			detail.testid("detail-mandate-text").Text() != m.Text {
			t.Fatalf("staff registration page: %d\n%s", detail.status, detail.testid("detail-mandate").Text())
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
		env := newStaffEnv(t, db, envOptions{})
		if _, err := settings.Of(env.svc).SetPaymentSettings(t.Context(), 1, settings.PaymentSettingsChange{BankCreditorName: str("TV Demo 1848 e.V."),
			BankIBAN: str("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
			t.Fatal(err)
		}
		c := env.newClient()
		f := env.completeDemo(c)
		if f.PaymentURL == nil {
			t.Fatal("no pay link")
		}
		u, _ := url.Parse(*f.PaymentURL)
		page := env.post(c, u.Path, url.Values{"paymentMethod": {"direct_debit"}})
		if title := page.doc.Find("title").Text(); strings.HasPrefix(title, "Error:") {
			t.Fatalf("the form before any refusal: %q", title)
		}
		action := page.doc.Find(`[data-testid="mandate"] form`).AttrOr("action", "")
		for _, c2 := range []struct{ lang, title, msg string }{
			{"en", "Error: ", "Tick the box to give the mandate."},
			{"de", "Fehler: ", "Setzen Sie das Häkchen, um das Mandat zu erteilen."},
		} {
			bad := env.post(c, action, url.Values{"holder": {"Alex Example"}, "iban": {"DE89 3704 0044 0532 0130 00"}}, "Accept-Language", c2.lang)
			box := bad.doc.Find("#mandate-consent")
			if bad.status != http.StatusUnprocessableEntity || !strings.HasPrefix(bad.doc.Find("title").Text(), c2.title) {
				t.Fatalf("%s: refused mandate: %d, title %q", c2.lang, bad.status, bad.doc.Find("title").Text())
			}
			if box.AttrOr("aria-invalid", "") != "true" || !strings.Contains(box.AttrOr("aria-describedby", ""), "mandate-consent-error") {
				t.Errorf("%s: the box: aria-invalid %q, described by %q", c2.lang, box.AttrOr("aria-invalid", ""), box.AttrOr("aria-describedby", ""))
			}
			if msg := bad.doc.Find("#mandate-consent-error"); msg.Text() != c2.msg || msg.AttrOr("data-testid", "") != "error-mandate-consent" {
				t.Errorf("%s: the message at the box: %q", c2.lang, msg.Text())
			}
			if a := bad.testid("error-summary").Find(`a[href="#mandate-consent"]`); a.Text() != c2.msg {
				t.Errorf("%s: the summary: %q", c2.lang, bad.testid("error-summary").Text())
			}
			if bad.doc.Find("#mandate-iban").AttrOr("value", "") != "DE89 3704 0044 0532 0130 00" {
				t.Errorf("%s: the IBAN typed was lost", c2.lang)
			}
		}
		if n, _ := db.NewSelect().Model((*directdebit.DebitMandate)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("a refused mandate was stored")
		}
	})
}
