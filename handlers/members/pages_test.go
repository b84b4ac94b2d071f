package members_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

func TestRegistrationPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.BrowserLogin("demo")

		overview := env.Get(c, "/membership/register/1")
		if state, _ := overview.TestID("overview").Attr("data-state"); state != "new" {
			t.Fatalf("overview state %q", state)
		}
		statuses := overview.TestID("person-status").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if strings.Join(statuses, ",") != "Available,Available,Registered,Available" {
			t.Fatalf("statuses %v", statuses)
		}
		for _, h := range []string{"Cache-Control", "Content-Security-Policy", "X-Content-Type-Options"} {
			if overview.Header.Get(h) == "" {
				t.Fatalf("page lacks %s", h)
			}
		}
		if overview.Header.Get("Cache-Control") != "no-store" || !strings.Contains(overview.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Fatalf("headers %v", overview.Header)
		}
		if v, _ := overview.Doc.Find("body").Attr("hx-history"); v != "false" {
			t.Fatalf("body hx-history %q", v)
		}

		sel := env.Get(c, "/membership/register/1/persons")
		if sel.TestID("step").Length() != 1 || sel.Doc.Find(`input[name="person"]`).Length() != 4 || sel.Doc.Find(`input[name="person"][disabled]`).Length() != 1 {
			t.Fatalf("selection page:\n%s", sel.Body)
		}
		none := env.Post(c, "/membership/register/1/persons", url.Values{})
		if none.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(none.Doc.Find("title").Text(), "Error:") || none.TestID("error-summary").Length() != 1 {
			t.Fatalf("empty selection: %d %q", none.Status, none.Doc.Find("title").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1", "3"}}), "/membership/register/1/step/1")

		// Question 1: a phone number that breaks the format rule.
		bad := env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"12345"}, "answer-3": {"0612345678"}})
		if bad.Status != http.StatusUnprocessableEntity {
			t.Fatalf("bad phone: %d", bad.Status)
		}
		input := bad.Doc.Find("#answer-1")
		if v, _ := input.Attr("value"); v != "12345" {
			t.Fatalf("entered value not kept: %q", v)
		}
		if inv, _ := input.Attr("aria-invalid"); inv != "true" {
			t.Fatalf("aria-invalid %q", inv)
		}
		if d, _ := input.Attr("aria-describedby"); d != "answer-1-error" || bad.Doc.Find("#answer-1-error").Text() != "Phone number must be 10 digits" {
			t.Fatalf("describedby %q, message %q", d, bad.Doc.Find("#answer-1-error").Text())
		}
		if href, _ := bad.TestID("error-summary").Find("a").Attr("href"); href != "#answer-1" {
			t.Fatalf("summary link %q", href)
		}
		if ok, _ := bad.Doc.Find("#answer-3").Attr("aria-invalid"); ok == "true" {
			t.Fatalf("the valid field is marked invalid")
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}}), "/membership/register/1/step/2")

		// A stale submission of question 1 shows the current step with a notice.
		stale := env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}})
		if stale.Status != http.StatusConflict || stale.TestID("notice").Length() != 1 || stale.TestID("step").AttrOr("data-step", "") != "2" {
			t.Fatalf("stale: %d", stale.Status)
		}
		// A later step's address leads back to the current one.
		handlertest.ExpectRedirect(t, env.Get(c, "/membership/register/1/step/5"), "/membership/register/1/step/2")

		step2 := env.Get(c, "/membership/register/1/step/2")
		if step2.TestID("progress").Text() != "Question 2 of 8" || step2.Doc.Find("select#answer-1 option").Length() != 6 {
			t.Fatalf("step 2: %q", step2.TestID("progress").Text())
		}
		// Back keeps the saved answers.
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/back", url.Values{"step": {"2"}}), "/membership/register/1/step/1")
		if v := env.Get(c, "/membership/register/1/step/1").Doc.Find("#answer-1").AttrOr("value", ""); v != "0612345678" {
			t.Fatalf("saved answer after Back: %q", v)
		}
		env.Post(c, "/membership/register/1/step/1", url.Values{"answer-1": {"0612345678"}, "answer-3": {"0687654321"}})
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"M"}, "answer-3": {"S"}}), "/membership/register/1/step/3")
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/3", url.Values{"answer-1": {"1"}}), "/membership/register/1/step/4")
		// Nobody transfers, so "Which club?" (5) is left out.
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/4", url.Values{}), "/membership/register/1/step/6")

		// Only the junior is asked for guardian consent.
		consent := env.Get(c, "/membership/register/1/step/6")
		if got := consent.TestID("progress").Text(); got != "Question 5 of 7" {
			t.Fatalf("progress on the consent step %q, want Question 5 of 7", got)
		}
		if consent.Doc.Find(`input[type="checkbox"]`).Length() != 1 || consent.Doc.Find("#answer-3").Length() != 1 {
			t.Fatalf("guardian consent must show only the junior")
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/6", url.Values{"answer-3": {"1"}}), "/membership/register/1/step/7")
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/7", url.Values{"one": {"1"}}), "/membership/register/1/step/8")

		// Leaving and coming back offers to continue.
		if state, _ := env.Get(c, "/membership/register/1").TestID("overview").Attr("data-state"); state != "in-progress" {
			t.Fatalf("overview while running: %q", state)
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/resume", url.Values{}), "/membership/register/1/step/8")
		last := env.Get(c, "/membership/register/1/step/8")
		if last.TestID("submit").Text() != "Continue to check your answers" {
			t.Fatalf("last step button %q", last.TestID("submit").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/step/8", url.Values{"answer-1": {"1"}, "answer-3": {"1"}}), "/membership/register/1/review")

		review := env.Get(c, "/membership/register/1/review")
		if review.TestID("review-person").Length() != 2 || review.TestID("confirm").Text() != "Confirm and pay" || review.TestID("order-lines").Find("tbody tr").Length() < 4 {
			t.Fatalf("review page:\n%s", review.Body)
		}
		if got, want := review.TestID("review").Find("p").First().Text(), overview.TestID("overview").Find("p").First().Text(); got != want || got == "" {
			t.Fatalf("review page period %q, want %q", got, want)
		}
		if review.TestID("order-total").Text() != "EUR 184.50" {
			t.Fatalf("total %q", review.TestID("order-total").Text())
		}
		// Nothing is committed before Confirm.
		var orders int
		if err := db.NewRaw("SELECT count(*) FROM orders").Scan(t.Context(), &orders); err != nil || orders != 0 {
			t.Fatalf("orders before confirm: %d %v", orders, err)
		}
		// Change leads to the question and forward again to the review.
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/change", url.Values{"step": {"2"}}), "/membership/register/1/step/2")
		env.Post(c, "/membership/register/1/step/2", url.Values{"answer-1": {"L"}, "answer-3": {"S"}})
		// The later steps come pre-filled: resubmit each as the page shows it.
		for _, step := range []int{3, 4, 6, 7, 8} {
			p := env.Get(c, "/membership/register/1/step/"+strconv.Itoa(step))
			form := url.Values{}
			p.Doc.Find("input, select").Each(func(_ int, s *goquery.Selection) {
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
			env.Post(c, "/membership/register/1/step/"+strconv.Itoa(step), form)
		}
		review = env.Get(c, "/membership/register/1/review")
		if !strings.Contains(review.TestID("review").Text(), "Large") {
			t.Fatalf("the changed answer is not on the review page")
		}
		version := review.Doc.Find(`input[name="version"]`).AttrOr("value", "")
		// A confirm of an older review (another window answered since) is refused.
		staleConfirm := env.Post(c, "/membership/register/1/confirm", url.Values{"version": {"1"}})
		if staleConfirm.Status != http.StatusConflict || staleConfirm.TestID("notice").Length() != 1 || staleConfirm.TestID("review").Length() != 1 {
			t.Fatalf("confirm of a stale review: %d", staleConfirm.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}}), "/membership/register/1/done")
		// A double click commits once.
		handlertest.ExpectRedirect(t, env.Post(c, "/membership/register/1/confirm", url.Values{"version": {version}}), "/membership/register/1/done")
		done := env.Get(c, "/membership/register/1/done")
		cd := done.TestID("countdown")
		if _, hidden := cd.Attr("hidden"); !hidden {
			t.Fatalf("without JavaScript nothing counts down: the countdown line must start hidden")
		}
		if cd.AttrOr("data-seconds", "") != "5" || cd.AttrOr("data-redirect-url", "") == "" || done.TestID("pay-now").AttrOr("href", "") != cd.AttrOr("data-redirect-url", "-") {
			t.Fatalf("done page:\n%s", done.Body)
		}
		if state, _ := env.Get(c, "/membership/register/1").TestID("overview").Attr("data-state"); state != "committed" {
			t.Fatalf("overview after commit: %q", state)
		}

		// Payment: fail, retry with a new attempt, cancel, then succeed.
		payURL, _ := url.Parse(done.TestID("pay-now").AttrOr("href", ""))
		failed := env.FollowPayment(c, payURL, "failed")
		if failed.TestID("payment-return").AttrOr("data-outcome", "") != "failed" || !strings.HasPrefix(failed.Doc.Find("title").Text(), "Error:") {
			t.Fatalf("failed page:\n%s", failed.Body)
		}
		failedRef := failed.TestID("retry-payment").Parent().Find(`input[name="reference"]`).AttrOr("value", "")
		retry := env.Post(c, "/membership/payment-retry", url.Values{"reference": {failedRef}})
		newPay, _ := url.Parse(retry.Header.Get("Location"))
		if retry.Status != http.StatusSeeOther || failedRef == "" || !strings.HasPrefix(newPay.Path, "/dev/pay/") || newPay.Query().Get("reference") == failedRef {
			t.Fatalf("retry: %d %q", retry.Status, retry.Header.Get("Location"))
		}
		cancelled := env.FollowPayment(c, newPay, "cancelled")
		if cancelled.TestID("back-to-registration").AttrOr("href", "") != "/membership/register/1" {
			t.Fatalf("cancelled page:\n%s", cancelled.Body)
		}
		again := env.Get(c, "/membership/register/1")
		payAgain, _ := url.Parse(again.TestID("pay-now").AttrOr("href", ""))
		success := env.FollowPayment(c, payAgain, "success")
		if success.TestID("payment-return").AttrOr("data-outcome", "") != "success" || success.TestID("next-steps").Length() != 1 {
			t.Fatalf("success page:\n%s", success.Body)
		}
		final := env.Get(c, "/membership/register/1")
		statuses = final.TestID("person-status").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
		if strings.Join(statuses, ",") != "Registered,Available,Registered,Registered" {
			t.Fatalf("statuses after payment %v", statuses)
		}
	})
}

func TestPagePostsRejectCrossOrigin(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.BrowserLogin("demo")
	p := env.Post(c, "/membership/register/1/persons", url.Values{"person": {"1"}}, "Origin", "https://evil.example")
	if p.Status != http.StatusForbidden {
		t.Fatalf("cross-origin post: %d", p.Status)
	}
	p = env.Post(c, "/membership/register/1/reset", url.Values{}, "Sec-Fetch-Site", "cross-site")
	if p.Status != http.StatusForbidden {
		t.Fatalf("cross-site post: %d", p.Status)
	}
}

// TestFirstPageBudget keeps the first registration page, with its CSS and
// JavaScript, at most 60 KB transferred (compressed).
func TestFirstPageBudget(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	c := env.BrowserLogin("demo")
	// The client must not decompress transparently: ask for gzip explicitly.
	first := env.Get(c, "/membership/register/1", "Accept-Encoding", "gzip")
	if first.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the page is not compressed")
	}
	total := len(first.Body)
	doc := env.Parse(env.Do(c, http.MethodGet, "/membership/register/1", nil)).Doc
	var assets []string
	doc.Find(`link[rel="stylesheet"]`).Each(func(_ int, s *goquery.Selection) { assets = append(assets, s.AttrOr("href", "")) })
	doc.Find(`script[src]`).Each(func(_ int, s *goquery.Selection) { assets = append(assets, s.AttrOr("src", "")) })
	if len(assets) != 3 {
		t.Fatalf("assets %v", assets)
	}
	for _, a := range assets {
		res := env.Do(c, http.MethodGet, a, nil, "Accept-Encoding", "gzip")
		if res.Status != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Fatalf("%s: %d %v", a, res.Status, res.Header)
		}
		t.Logf("%s: %d bytes compressed", a, len(res.Body))
		total += len(res.Body)
	}
	t.Logf("first page in all: %d bytes compressed", total)
	if total > 60*1000 {
		t.Fatalf("the first page transfers %d bytes, over the 60 KB budget", total)
	}
}
