package server_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

func TestHealthAndReadiness(t *testing.T) {
	db := dbtest.SQLite(t)
	env := handlertest.NewEnv(t, db)
	c := env.NewClient()
	for _, path := range []string{"/healthz", "/readyz"} {
		if res := env.Do(c, http.MethodGet, path, nil); res.Status != http.StatusOK {
			t.Fatalf("%s: %d", path, res.Status)
		}
	}
	// Last night's books check found something: said in the detail,
	// counted only (the answer is public), the status stays ok.
	if _, err := db.NewInsert().Model(&books.StoredFinding{OrganisationID: 1, Rule: books.RuleParts, Message: "order 1 is unpaid, yet ...",
		Records: "order 1", CheckedAt: clock.Now()}).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := env.Do(c, http.MethodGet, "/readyz", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"books":"1 violation(s)`) ||
		strings.Contains(string(res.Body), "order 1") {
		t.Fatalf("readyz with a finding: %d %s", res.Status, res.Body)
	}
	db.Close()
	if res := env.Do(c, http.MethodGet, "/readyz", nil); res.Status != http.StatusServiceUnavailable {
		t.Fatalf("readyz with the database gone: %d", res.Status)
	}
	if res := env.Do(c, http.MethodGet, "/healthz", nil); res.Status != http.StatusOK {
		t.Fatalf("healthz with the database gone: %d", res.Status)
	}
}

// HSTS is sent on https requests only: the connection's own TLS, or
// X-Forwarded-Proto from a trusted proxy, never a client's say-so.
func TestHSTSOnHTTPSOnly(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		proto   string
		want    string
	}{
		{"plain http", nil, "", ""},
		{"a client claims https", nil, "https", ""},
		{"a trusted proxy says https", trusted, "https", "max-age=31536000"},
		{"a trusted proxy says http", trusted, "http", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{TrustedProxies: tc.proxies, HSTS: 365 * 24 * time.Hour})
			for _, path := range []string{"/healthz", "/membership/register/1", "/api/forms/membership/1"} {
				res := env.Do(env.NewClient(), http.MethodGet, path, nil, "X-Forwarded-Proto", tc.proto)
				if got := res.Header.Get("Strict-Transport-Security"); got != tc.want {
					t.Errorf("%s: Strict-Transport-Security %q, want %q", path, got, tc.want)
				}
			}
		})
	}
}
