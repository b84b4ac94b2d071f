package oidc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"portal/relay/oidc"
	"portal/relay/session"
)

func newAttempts(t *testing.T) *oidc.AttemptCookies {
	t.Helper()
	kr, err := session.ParseKeyring(session.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	return oidc.NewAttemptCookies(kr, "/oauth2/callback", func(*http.Request) bool { return true })
}

// roundTrip sets a's cookie and returns a callback request carrying it.
func roundTrip(t *testing.T, ac *oidc.AttemptCookies, a *oidc.Attempt) *http.Request {
	t.Helper()
	w := httptest.NewRecorder()
	if err := ac.Set(w, httptest.NewRequest(http.MethodGet, "/login", nil), a); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/oauth2/callback", nil)
	for _, c := range w.Result().Cookies() {
		if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/oauth2/callback" || !oidc.IsAttemptCookie(c.Name) {
			t.Fatalf("attempt cookie %+v", c)
		}
		r.AddCookie(c)
	}
	return r
}

func TestAttemptCookies(t *testing.T) {
	ac := newAttempts(t)
	now := time.Now()
	a := oidc.NewAttempt("/back", now)

	got, err := ac.Take(httptest.NewRecorder(), roundTrip(t, ac, a), a.State, now)
	if err != nil || *got != *a {
		t.Fatalf("Take = %+v, %v; want %+v", got, err, a)
	}

	fails := map[string]func() (*oidc.Attempt, error){
		"other state": func() (*oidc.Attempt, error) {
			return ac.Take(httptest.NewRecorder(), roundTrip(t, ac, a), oidc.NewAttempt("/", now).State, now)
		},
		"no state": func() (*oidc.Attempt, error) { return ac.Take(httptest.NewRecorder(), roundTrip(t, ac, a), "", now) },
		"expired": func() (*oidc.Attempt, error) {
			return ac.Take(httptest.NewRecorder(), roundTrip(t, ac, a), a.State, now.Add(oidc.AttemptTTL+time.Second))
		},
		"sealed by another key": func() (*oidc.Attempt, error) {
			return newAttempts(t).Take(httptest.NewRecorder(), roundTrip(t, ac, a), a.State, now)
		},
		"tampered": func() (*oidc.Attempt, error) {
			r := roundTrip(t, ac, a)
			c := r.Cookies()[0]
			b := []byte(c.Value)
			b[len(b)-3] ^= 1
			r2 := httptest.NewRequest(http.MethodGet, "/oauth2/callback", nil)
			r2.AddCookie(&http.Cookie{Name: c.Name, Value: string(b)})
			return ac.Take(httptest.NewRecorder(), r2, a.State, now)
		},
	}
	for name, take := range fails {
		if _, err := take(); !errors.Is(err, oidc.ErrAttempt) {
			t.Errorf("%s: error %v, want ErrAttempt", name, err)
		}
	}

	// Take deletes the cookie it used.
	w := httptest.NewRecorder()
	ac.Take(w, roundTrip(t, ac, a), a.State, now)
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Fatalf("Take set %+v, want the attempt cookie deleted", cs)
	}
}
