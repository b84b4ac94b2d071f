package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/relay/hashlink"
)

func TestHashGuard(t *testing.T) {
	env := newEnv(t, dbtest.SQLite(t))
	good := hashlink.Sign(testSecret, "demo")
	cases := []struct {
		name, path, reason string
	}{
		{"missing h", "/membership/register/1?u=demo", "missing"},
		{"missing u", "/membership/register/1?h=" + good, "missing"},
		{"wrong hash", "/membership/register/1?u=demo&h=" + hashlink.Sign("other-secret-123456", "demo"), "invalid"},
		{"hash of another key", "/membership/register/1?u=demo-1&h=" + good, "invalid"},
		{"unknown period", "/membership/register/99?u=demo&h=" + good, "period"},
		{"closed period", "/membership/register/2?u=demo&h=" + good, "period"},
		{"not linked", "/membership/register/1?u=stranger&h=" + hashlink.Sign(testSecret, "stranger"), "period"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := env.newClient()
			p := env.get(c, tc.path)
			u, _ := url.Parse(tc.path)
			expectRedirect(t, p, u.Path+"?error="+tc.reason)
			if p.header.Get("Set-Cookie") != "" {
				t.Fatalf("a denied link must not start a session")
			}
			denied := env.get(c, p.header.Get("Location"))
			if denied.status != http.StatusForbidden || denied.testid("error-title").Text() != "Access denied" {
				t.Fatalf("denied page: %d %q", denied.status, denied.testid("error-title").Text())
			}
			msg := denied.testid("error-message").Text()
			want := map[string]string{"missing": "parameters are missing", "invalid": "verification of this link is invalid",
				"period": "unknown, closed or expired"}[tc.reason]
			if !strings.Contains(msg, want) {
				t.Fatalf("message %q does not say %q", msg, want)
			}
			if strings.Contains(string(denied.body), testSecret) {
				t.Fatalf("the hash secret leaked")
			}
		})
	}
	t.Run("any error parameter denies", func(t *testing.T) {
		p := env.get(env.newClient(), "/membership/register/1?error=anything")
		if p.status != http.StatusForbidden {
			t.Fatalf("status %d", p.status)
		}
	})
	t.Run("valid link starts a session and drops the hash", func(t *testing.T) {
		c := env.newClient()
		p := env.get(c, "/membership/register/1?u=demo&h="+strings.ToUpper(good))
		expectRedirect(t, p, "/membership/register/1")
		if !strings.Contains(p.header.Get("Set-Cookie"), "JSESSIONID=") || p.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("headers %v", p.header)
		}
		if overview := env.get(c, "/membership/register/1"); overview.status != http.StatusOK || overview.testid("overview").Length() != 1 {
			t.Fatalf("overview after login: %d", overview.status)
		}
	})
	t.Run("user key as a path segment", func(t *testing.T) {
		p := env.get(env.newClient(), "/membership/register/1/demo?h="+good)
		expectRedirect(t, p, "/membership/register/1")
	})
	t.Run("clean address without a session", func(t *testing.T) {
		p := env.get(env.newClient(), "/membership/register/1")
		if p.status != http.StatusForbidden || !strings.Contains(p.testid("error-message").Text(), "session has ended") {
			t.Fatalf("got %d %q", p.status, p.testid("error-message").Text())
		}
	})
	t.Run("cross-site arrival is carried over once", func(t *testing.T) {
		c := env.newClient()
		p := env.get(c, "/membership/register/1", "Sec-Fetch-Site", "cross-site")
		refresh, _ := p.doc.Find(`meta[http-equiv="refresh"]`).Attr("content")
		if p.status != http.StatusOK || refresh != "0;url=/membership/register/1?continue=1" {
			t.Fatalf("got %d refresh %q", p.status, refresh)
		}
		again := env.get(c, "/membership/register/1?continue=1", "Sec-Fetch-Site", "cross-site")
		if again.status != http.StatusForbidden {
			t.Fatalf("the carry-over must not loop: %d", again.status)
		}
	})
}
