package members_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
)

func TestHashGuard(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	good := hashlink.Sign(handlertest.HashSecret, "demo")
	cases := []struct {
		name, path, reason string
	}{
		{"missing h", "/membership/register/1?u=demo", "missing"},
		{"missing u", "/membership/register/1?h=" + good, "missing"},
		{"wrong hash", "/membership/register/1?u=demo&h=" + hashlink.Sign("other-secret-123456", "demo"), "invalid"},
		{"hash of another key", "/membership/register/1?u=demo-1&h=" + good, "invalid"},
		{"unknown period", "/membership/register/99?u=demo&h=" + good, "period"},
		{"closed period", "/membership/register/2?u=demo&h=" + good, "period"},
		{"not linked", "/membership/register/1?u=stranger&h=" + hashlink.Sign(handlertest.HashSecret, "stranger"), "period"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := env.NewClient()
			p := env.Get(c, tc.path)
			u, _ := url.Parse(tc.path)
			handlertest.ExpectRedirect(t, p, u.Path+"?error="+tc.reason)
			if p.Header.Get("Set-Cookie") != "" {
				t.Fatalf("a denied link must not start a session")
			}
			denied := env.Get(c, p.Header.Get("Location"))
			if denied.Status != http.StatusForbidden || denied.TestID("error-title").Text() != "Access denied" {
				t.Fatalf("denied page: %d %q", denied.Status, denied.TestID("error-title").Text())
			}
			msg := denied.TestID("error-message").Text()
			want := map[string]string{"missing": "parameters are missing", "invalid": "verification of this link is invalid",
				"period": "unknown, closed or expired"}[tc.reason]
			if !strings.Contains(msg, want) {
				t.Fatalf("message %q does not say %q", msg, want)
			}
			if strings.Contains(string(denied.Body), handlertest.HashSecret) {
				t.Fatalf("the hash secret leaked")
			}
		})
	}
	t.Run("any error parameter denies", func(t *testing.T) {
		p := env.Get(env.NewClient(), "/membership/register/1?error=anything")
		if p.Status != http.StatusForbidden {
			t.Fatalf("status %d", p.Status)
		}
	})
	t.Run("valid link starts a session and drops the hash", func(t *testing.T) {
		c := env.NewClient()
		p := env.Get(c, "/membership/register/1?u=demo&h="+strings.ToUpper(good))
		handlertest.ExpectRedirect(t, p, "/membership/register/1")
		if !strings.Contains(p.Header.Get("Set-Cookie"), "JSESSIONID=") || p.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("headers %v", p.Header)
		}
		if overview := env.Get(c, "/membership/register/1"); overview.Status != http.StatusOK || overview.TestID("overview").Length() != 1 {
			t.Fatalf("overview after login: %d", overview.Status)
		}
	})
	t.Run("user key as a path segment", func(t *testing.T) {
		p := env.Get(env.NewClient(), "/membership/register/1/demo?h="+good)
		handlertest.ExpectRedirect(t, p, "/membership/register/1")
	})
	t.Run("clean address without a session", func(t *testing.T) {
		p := env.Get(env.NewClient(), "/membership/register/1")
		if p.Status != http.StatusForbidden || !strings.Contains(p.TestID("error-message").Text(), "session has ended") {
			t.Fatalf("got %d %q", p.Status, p.TestID("error-message").Text())
		}
	})
	t.Run("cross-site arrival is carried over once", func(t *testing.T) {
		c := env.NewClient()
		p := env.Get(c, "/membership/register/1", "Sec-Fetch-Site", "cross-site")
		refresh, _ := p.Doc.Find(`meta[http-equiv="refresh"]`).Attr("content")
		if p.Status != http.StatusOK || refresh != "0;url=/membership/register/1?continue=1" {
			t.Fatalf("got %d refresh %q", p.Status, refresh)
		}
		again := env.Get(c, "/membership/register/1?continue=1", "Sec-Fetch-Site", "cross-site")
		if again.Status != http.StatusForbidden {
			t.Fatalf("the carry-over must not loop: %d", again.Status)
		}
	})
}
