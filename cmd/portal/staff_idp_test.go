package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"portal/handlers/server"
	"portal/relay/devidp"
	"portal/relay/session"
)

// TestServeStaffSignInWithoutBackend: staff sign in through a real OIDC
// provider (the development IdP, started apart from the portal as an
// external one would be) with no admin backend configured: the portal
// starts, and the whole authorisation code flow ends on the staff pages.
func TestServeStaffSignInWithoutBackend(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	base := "http://" + addr
	idp, err := devidp.Start(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })

	db := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	setup := env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef")
	for _, args := range [][]string{{"seed", "demo"}, {"staff", "add", "--org", "1", "--email", "ops@club.example", "--name", "Ops", "--role", "admin"}} {
		if out, err := runCmd(t, setup, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	getenv := env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "test",
		"PORTAL_COOKIE_SECURE", "false", "PORTAL_ADDR", addr, "PORTAL_BASE_URL", base, "PORTAL_SESSION_KEY", session.GenerateKey(),
		"PORTAL_OIDC_ISSUER", idp.Issuer(), "PORTAL_OIDC_CLIENT_ID", idp.ClientID(), "PORTAL_OIDC_CLIENT_SECRET", idp.ClientSecret())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil || t.Failed() {
			t.Logf("serve: %v\n%s", err, stderr.String())
		}
	})
	waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))
	if !strings.Contains(stderr.String(), "staff sign-in on") {
		t.Fatalf("staff sign-in not on:\n%s", stderr.String())
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const redirect = 0 // any redirect
	var body []byte
	step := func(u string, want int) *url.URL {
		t.Helper()
		res, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want && !(want == redirect && res.StatusCode/100 == 3) {
			t.Fatalf("GET %s: %d, want %d\n%.3000s", u, res.StatusCode, want, body)
		}
		loc, _ := res.Location()
		return loc
	}
	auth := step(base+server.StaffLoginPath+"/start", redirect)
	if !strings.HasPrefix(auth.String(), idp.Issuer()) {
		t.Fatalf("sign-in goes to %s, not the IdP", auth)
	}
	q := auth.Query()
	q.Set("login_as", "ops@club.example")
	auth.RawQuery = q.Encode()
	callback := step(auth.String(), redirect)
	if !strings.HasPrefix(callback.String(), base+server.StaffCallbackPath) {
		t.Fatalf("the IdP returns to %s", callback)
	}
	// The callback binds the staff record, then continues (a page that
	// drops the code from the referrer) to the staff pages.
	step(callback.String(), http.StatusOK)
	if !strings.Contains(string(body), `href="/staff"`) {
		t.Fatalf("after the callback:\n%s", body)
	}
	step(base+server.StaffPrefix, http.StatusOK)
	if !strings.Contains(string(body), `data-testid="staff-user-name">Ops<`) || !strings.Contains(string(body), server.StaffLogoutPath) {
		t.Fatalf("the staff overview is not signed in:\n%.2000s", body)
	}
}
