package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fakeUserInfoOP serves discovery and a userinfo endpoint answering info
// to the bearer token "at", counting the calls.
func fakeUserInfoOP(t *testing.T, info map[string]any, calls *int) *Provider {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/auth",
			"token_endpoint": srv.URL + "/token", "jwks_uri": srv.URL + "/keys", "userinfo_endpoint": srv.URL + "/userinfo"})
	})
	mux.HandleFunc("/userinfo", func(w http.ResponseWriter, r *http.Request) {
		*calls++
		if r.Header.Get("Authorization") != "Bearer at" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(info)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return NewProvider(ProviderConfig{Issuer: srv.URL, ClientID: "c"})
}

func TestCompleteClaimsFromUserInfo(t *testing.T) {
	ctx := context.Background()
	var calls int
	p := fakeUserInfoOP(t, map[string]any{"sub": "s1", "email": "a@example.org", "email_verified": true, "name": "From userinfo"}, &calls)

	// The ID token lacks email and email_verified: they come from userinfo,
	// while the ID token's own name stays.
	tok := &Tokens{AccessToken: "at", Subject: "s1", Claims: json.RawMessage(`{"sub":"s1","name":"From the ID token"}`)}
	if err := p.CompleteClaims(ctx, tok, "email", "email_verified"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(tok.Claims, &got)
	if got["email"] != "a@example.org" || got["email_verified"] != true || got["name"] != "From the ID token" || calls != 1 {
		t.Fatalf("claims %v after %d calls", got, calls)
	}

	// Nothing missing: no call.
	if err := p.CompleteClaims(ctx, tok, "email", "email_verified"); err != nil || calls != 1 {
		t.Fatalf("complete claims asked again: %v, %d calls", err, calls)
	}

	// A userinfo answer for another subject is not used.
	other := &Tokens{AccessToken: "at", Subject: "s2", Claims: json.RawMessage(`{"sub":"s2"}`)}
	if err := p.CompleteClaims(ctx, other, "email"); !errors.Is(err, ErrUserInfoMismatch) || string(other.Claims) != `{"sub":"s2"}` {
		t.Fatalf("another subject's userinfo: %v, claims %s", err, other.Claims)
	}

	// A userinfo endpoint refusing the token: the IdP's answer is no answer.
	bad := &Tokens{AccessToken: "other", Subject: "s1", Claims: json.RawMessage(`{"sub":"s1"}`)}
	if err := p.CompleteClaims(ctx, bad, "email"); !errors.Is(err, ErrProviderUnavailable) {
		t.Fatalf("refused userinfo: %v", err)
	}
}

func TestCompleteClaimsWithoutSubject(t *testing.T) {
	var calls int
	p := fakeUserInfoOP(t, map[string]any{"email": "a@example.org", "email_verified": true}, &calls)
	tok := &Tokens{AccessToken: "at", Subject: "s1", Claims: json.RawMessage(`{"sub":"s1"}`)}
	if err := p.CompleteClaims(context.Background(), tok, "email"); !errors.Is(err, ErrUserInfoMismatch) {
		t.Fatalf("userinfo without a subject: %v", err)
	}
}
