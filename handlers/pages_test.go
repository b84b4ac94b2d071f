package handlers_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/relay/hashlink"
)

// page is a fetched HTML page.
type page struct {
	response
	doc *goquery.Document
}

func (env *testEnv) get(c *http.Client, path string, headers ...string) page {
	env.t.Helper()
	return env.parse(env.do(c, http.MethodGet, path, nil, headers...))
}

func (env *testEnv) post(c *http.Client, path string, form url.Values, headers ...string) page {
	env.t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		env.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return env.parse(roundTrip(env.t, c, req, headers...))
}

func (env *testEnv) parse(r response) page {
	env.t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.body))
	if err != nil {
		env.t.Fatal(err)
	}
	return page{response: r, doc: doc}
}

func (p page) testid(id string) *goquery.Selection {
	return p.doc.Find(`[data-testid="` + id + `"]`)
}

func expectRedirect(t testing.TB, p page, location string) {
	t.Helper()
	if p.status != http.StatusSeeOther || p.header.Get("Location") != location {
		t.Fatalf("got %d to %q, want 303 to %q", p.status, p.header.Get("Location"), location)
	}
}

// browserLogin follows the demo's e-mail link and returns the signed-in client.
func (env *testEnv) browserLogin(userKey string) *http.Client {
	env.t.Helper()
	c := env.newClient()
	p := env.get(c, "/membership/register/1?u="+userKey+"&h="+hashlink.Sign(testSecret, userKey))
	expectRedirect(env.t, p, "/membership/register/1")
	return c
}

func TestRegistrationPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnv(t, db)
		c := env.browserLogin("demo")

		overview := env.get(c, "/membership/register/1")
		if state, _ := overview.testid("overview").Attr("data-state"); state != "new" {
			t.Fatalf("overview state %q", state)
		}
		statuses := overview.testid("person-status").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if strings.Join(statuses, ",") != "Available,Available,Registered,Available" {
			t.Fatalf("statuses %v", statuses)
		}
		for _, h := range []string{"Cache-Control", "Content-Security-Policy", "X-Content-Type-Options"} {
			if overview.header.Get(h) == "" {
				t.Fatalf("page lacks %s", h)
			}
		}
		if overview.header.Get("Cache-Control") != "no-store" || !strings.Contains(overview.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Fatalf("headers %v", overview.header)
		}
		if v, _ := overview.doc.Find("body").Attr("hx-history"); v != "false" {
			t.Fatalf("body hx-history %q", v)
		}

		sel := env.get(c, "/membership/register/1/persons")
		if sel.testid("step").Length() != 1 || sel.doc.Find(`input[name="person"]`).Length() != 4 || sel.doc.Find(`input[name="person"][disabled]`).Length() != 1 {
			t.Fatalf("selection page:\n%s", sel.body)
		}
		none := env.post(c, "/membership/register/1/persons", url.Values{})
		if none.status != http.StatusUnprocessableEntity || !strings.HasPrefix(none.doc.Find("title").Text(), "Error:") || none.testid("error-summary").Length() != 1 {
			t.Fatalf("empty selection: %d %q", none.status, none.doc.Find("title").Text())
		}
		expectRedirect(t, env.post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")

		// Question 1: a phone number that breaks the format rule.
		bad := env.post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"12345"}, "answer-3": {"0612345678"}})
		if bad.status != http.StatusUnprocessableEntity {
			t.Fatalf("bad phone: %d", bad.status)
		}
		input := bad.doc.Find("#answer-1")
		if v, _ := input.Attr("value"); v != "12345" {
			t.Fatalf("entered value not kept: %q", v)
		}
		if inv, _ := input.Attr("aria-invalid"); inv != "true" {
			t.Fatalf("aria-invalid %q", inv)
		}
		if d, _ := input.Attr("aria-describedby"); d != "answer-1-error" || bad.doc.Find("#answer-1-error").Text() != "Phone number must be 10 digits" {
			t.Fatalf("describedby %q, message %q", d, bad.doc.Find("#answer-1-error").Text())
		}
		if href, _ := bad.testid("error-summary").Find("a").Attr("href"); href != "#answer-1" {
			t.Fatalf("summary link %q", href)
		}
		if ok, _ := bad.doc.Find("#answer-3").Attr("aria-invalid"); ok == "true" {
			t.Fatalf("the valid field is marked invalid")
		}
		expectRedirect(t, env.post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}), "/membership/register/1/step/2")

		// A stale submission of question 1 shows the current step with a notice.
		stale := env.post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}})
		if stale.status != http.StatusConflict || stale.testid("notice").Length() != 1 || stale.testid("step").AttrOr("data-step", "") != "2" {
			t.Fatalf("stale: %d", stale.status)
		}
		// A later step's address leads back to the current one.
		expectRedirect(t, env.get(c, "/membership/register/1/step/5"), "/membership/register/1/step/2")

		step2 := env.get(c, "/membership/register/1/step/2")
		if step2.testid("progress").Text() != "Question 2 of 8" || step2.doc.Find("select#answer-1 option").Length() != 6 {
			t.Fatalf("step 2: %q", step2.testid("progress").Text())
		}
		// Back keeps the saved answers.
		expectRedirect(t, env.post(c, "/membership/register/1/back", url.Values{"step": {"2"}}), "/membership/register/1/step/1")
		if v := env.get(c, "/membership/register/1/step/1").doc.Find("#answer-1").AttrOr("value", ""); v != "0612345678" {
			t.Fatalf("saved answer after Back: %q", v)
		}
		env.post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}})
		expectRedirect(t, env.post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"M"}, "answer-3": {"S"}}), "/membership/register/1/step/3")
		expectRedirect(t, env.post(c, "/membership/register/1/step/3", url.Values{"answer-1": {"1"}}), "/membership/register/1/step/4")
		// Nobody transfers, so "Which club?" (5) is left out.
		expectRedirect(t, env.post(c, "/membership/register/1/step/4", url.Values{}), "/membership/register/1/step/6")

		// Only the junior is asked for guardian consent.
		consent := env.get(c, "/membership/register/1/step/6")
		if got := consent.testid("progress").Text(); got != "Question 5 of 7" {
			t.Fatalf("progress on the consent step %q, want Question 5 of 7", got)
		}
		if consent.doc.Find(`input[type="checkbox"]`).Length() != 1 || consent.doc.Find("#answer-3").Length() != 1 {
			t.Fatalf("guardian consent must show only the junior")
		}
		expectRedirect(t, env.post(c, "/membership/register/1/step/6", url.Values{"answer-3": {"1"}}), "/membership/register/1/step/7")
		expectRedirect(t, env.post(c, "/membership/register/1/step/7", url.Values{"one": {"1"}}), "/membership/register/1/step/8")

		// Leaving and coming back offers to continue.
		if state, _ := env.get(c, "/membership/register/1").testid("overview").Attr("data-state"); state != "in-progress" {
			t.Fatalf("overview while running: %q", state)
		}
		expectRedirect(t, env.post(c, "/membership/register/1/resume", url.Values{}), "/membership/register/1/step/8")
		last := env.get(c, "/membership/register/1/step/8")
		if last.testid("submit").Text() != "Continue to check your answers" {
			t.Fatalf("last step button %q", last.testid("submit").Text())
		}
		expectRedirect(t, env.post(c, "/membership/register/1/step/8", url.Values{"answer-1": {"1"}, "answer-3": {"1"}}), "/membership/register/1/review")

		review := env.get(c, "/membership/register/1/review")
		if review.testid("review-person").Length() != 2 || review.testid("confirm").Text() != "Confirm and pay" || review.testid("order-lines").Find("tbody tr").Length() < 4 {
			t.Fatalf("review page:\n%s", review.body)
		}
		if got, want := review.testid("review").Find("p").First().Text(), overview.testid("overview").Find("p").First().Text(); got != want || got == "" {
			t.Fatalf("review page period %q, want %q", got, want)
		}
		if review.testid("order-total").Text() != "EUR 184.50" {
			t.Fatalf("total %q", review.testid("order-total").Text())
		}
		// Nothing is committed before Confirm.
		var orders int
		if err := db.NewRaw("SELECT count(*) FROM orders").Scan(t.Context(), &orders); err != nil || orders != 0 {
			t.Fatalf("orders before confirm: %d %v", orders, err)
		}
		// Change leads to the question and forward again to the review.
		expectRedirect(t, env.post(c, "/membership/register/1/change", url.Values{"step": {"2"}}), "/membership/register/1/step/2")
		env.post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"L"}, "answer-3": {"S"}})
		// The later steps come pre-filled: resubmit each as the page shows it.
		for _, step := range []int{3, 4, 6, 7, 8} {
			p := env.get(c, "/membership/register/1/step/"+strconv.Itoa(step))
			form := url.Values{}
			p.doc.Find("input, select").Each(func(_ int, s *goquery.Selection) {
				name, _ := s.Attr("name")
				switch s.AttrOr("type", "") {
				case "checkbox", "radio":
					if _, checked := s.Attr("checked"); checked {
						form.Add(name, s.AttrOr("value", ""))
					}
				default:
					if v, ok := s.Find("option[selected]").Attr("value"); ok {
						form.Add(name, v)
					} else if v, ok := s.Attr("value"); ok && name != "step" {
						form.Add(name, v)
					}
				}
			})
			env.post(c, "/membership/register/1/step/"+strconv.Itoa(step), form)
		}
		review = env.get(c, "/membership/register/1/review")
		if !strings.Contains(review.testid("review").Text(), "Large") {
			t.Fatalf("the changed answer is not on the review page")
		}
		version := review.doc.Find(`input[name="version"]`).AttrOr("value", "")
		// A confirm of an older review (another window answered since) is refused.
		staleConfirm := env.post(c, "/membership/register/1/confirm", url.Values{"version": {"1"}})
		if staleConfirm.status != http.StatusConflict || staleConfirm.testid("notice").Length() != 1 || staleConfirm.testid("review").Length() != 1 {
			t.Fatalf("confirm of a stale review: %d", staleConfirm.status)
		}
		expectRedirect(t, env.post(c, "/membership/register/1/confirm", url.Values{"version": {version}}), "/membership/register/1/done")
		// A double click commits once.
		expectRedirect(t, env.post(c, "/membership/register/1/confirm", url.Values{"version": {version}}), "/membership/register/1/done")
		done := env.get(c, "/membership/register/1/done")
		cd := done.testid("countdown")
		if _, hidden := cd.Attr("hidden"); !hidden {
			t.Fatalf("without JavaScript nothing counts down: the countdown line must start hidden")
		}
		if cd.AttrOr("data-seconds", "") != "5" || cd.AttrOr("data-redirect-url", "") == "" || done.testid("pay-now").AttrOr("href", "") != cd.AttrOr("data-redirect-url", "-") {
			t.Fatalf("done page:\n%s", done.body)
		}
		if state, _ := env.get(c, "/membership/register/1").testid("overview").Attr("data-state"); state != "committed" {
			t.Fatalf("overview after commit: %q", state)
		}

		// Payment: fail, retry with a new attempt, cancel, then succeed.
		payURL, _ := url.Parse(done.testid("pay-now").AttrOr("href", ""))
		failed := env.followPayment(c, payURL, "failed")
		if failed.testid("payment-return").AttrOr("data-outcome", "") != "failed" || !strings.HasPrefix(failed.doc.Find("title").Text(), "Error:") {
			t.Fatalf("failed page:\n%s", failed.body)
		}
		failedRef := failed.testid("retry-payment").Parent().Find(`input[name="reference"]`).AttrOr("value", "")
		retry := env.post(c, "/membership/payment-retry", url.Values{"reference": {failedRef}})
		newPay, _ := url.Parse(retry.header.Get("Location"))
		if retry.status != http.StatusSeeOther || failedRef == "" || !strings.HasPrefix(newPay.Path, "/dev/pay/") || newPay.Query().Get("reference") == failedRef {
			t.Fatalf("retry: %d %q", retry.status, retry.header.Get("Location"))
		}
		cancelled := env.followPayment(c, newPay, "cancelled")
		if cancelled.testid("back-to-registration").AttrOr("href", "") != "/membership/register/1" {
			t.Fatalf("cancelled page:\n%s", cancelled.body)
		}
		again := env.get(c, "/membership/register/1")
		payAgain, _ := url.Parse(again.testid("pay-now").AttrOr("href", ""))
		success := env.followPayment(c, payAgain, "success")
		if success.testid("payment-return").AttrOr("data-outcome", "") != "success" || success.testid("next-steps").Length() != 1 {
			t.Fatalf("success page:\n%s", success.body)
		}
		final := env.get(c, "/membership/register/1")
		statuses = final.testid("person-status").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if strings.Join(statuses, ",") != "Registered,Available,Registered,Registered" {
			t.Fatalf("statuses after payment %v", statuses)
		}
	})
}

// followPayment decides at the test gateway and follows its return.
func (env *testEnv) followPayment(c *http.Client, pay *url.URL, outcome string) page {
	env.t.Helper()
	pay = env.checkout(c, pay.String())
	decided := env.post(c, pay.Path, url.Values{"status": {outcome}})
	ret, err := url.Parse(decided.header.Get("Location"))
	if decided.status != http.StatusSeeOther || err != nil {
		env.t.Fatalf("gateway: %d %q", decided.status, decided.header.Get("Location"))
	}
	return env.get(c, ret.RequestURI())
}

func TestPagePostsRejectCrossOrigin(t *testing.T) {
	env := newEnv(t, dbtest.SQLite(t))
	c := env.browserLogin("demo")
	p := env.post(c, "/membership/register/1/persons", url.Values{"person": {"1"}}, "Origin", "https://evil.example")
	if p.status != http.StatusForbidden {
		t.Fatalf("cross-origin post: %d", p.status)
	}
	p = env.post(c, "/membership/register/1/reset", url.Values{}, "Sec-Fetch-Site", "cross-site")
	if p.status != http.StatusForbidden {
		t.Fatalf("cross-site post: %d", p.status)
	}
}

// TestFirstPageBudget keeps the first registration page, with its CSS and
// JavaScript, at most 60 KB transferred (compressed).
func TestFirstPageBudget(t *testing.T) {
	env := newEnv(t, dbtest.SQLite(t))
	c := env.browserLogin("demo")
	// The client must not decompress transparently: ask for gzip explicitly.
	first := env.get(c, "/membership/register/1", "Accept-Encoding", "gzip")
	if first.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the page is not compressed")
	}
	total := len(first.body)
	doc := env.parse(env.do(c, http.MethodGet, "/membership/register/1", nil)).doc
	var assets []string
	doc.Find(`link[rel="stylesheet"]`).Each(func(_ int, s *goquery.Selection) { assets = append(assets, s.AttrOr("href", "")) })
	doc.Find(`script[src]`).Each(func(_ int, s *goquery.Selection) { assets = append(assets, s.AttrOr("src", "")) })
	if len(assets) != 3 {
		t.Fatalf("assets %v", assets)
	}
	for _, a := range assets {
		res := env.do(c, http.MethodGet, a, nil, "Accept-Encoding", "gzip")
		if res.status != http.StatusOK || res.header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.header.Get("Cache-Control"), "immutable") {
			t.Fatalf("%s: %d %v", a, res.status, res.header)
		}
		t.Logf("%s: %d bytes compressed", a, len(res.body))
		total += len(res.body)
	}
	t.Logf("first page in all: %d bytes compressed", total)
	if total > 60*1000 {
		t.Fatalf("the first page transfers %d bytes, over the 60 KB budget", total)
	}
}
