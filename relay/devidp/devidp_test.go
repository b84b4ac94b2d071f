package devidp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"portal/relay/devidp"
	"portal/relay/oidc"
)

func TestStartRefusesNonLoopback(t *testing.T) {
	for _, base := range []string{"https://portal.example", "http://10.0.0.5:8080", "http://0.0.0.0:8080", "http://localhost.example.com", "", "not a url"} {
		if idp, err := devidp.Start(base, nil); !errors.Is(err, devidp.ErrNotLoopback) {
			if idp != nil {
				idp.Close()
			}
			t.Errorf("Start(%q) = %v, want ErrNotLoopback", base, err)
		}
	}
}

// The development IdP asks who to sign in as, then completes a real
// authorisation code flow (PKCE, nonce) with the portal's OIDC client,
// with the chosen address verified.
func TestSignInAs(t *testing.T) {
	for _, base := range []string{"http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"} {
		if !devidp.Loopback(base) {
			t.Errorf("Loopback(%q) = false", base)
		}
	}
	idp, err := devidp.Start("http://127.0.0.1:8080", func(context.Context) []string { return []string{"admin@club.example"} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })
	if !strings.HasPrefix(idp.Issuer(), "http://127.0.0.1:") {
		t.Fatalf("issuer %q is not on 127.0.0.1", idp.Issuer())
	}
	const redirect = "http://127.0.0.1:8080/staff/auth/callback"
	p := oidc.NewProvider(oidc.ProviderConfig{Issuer: idp.Issuer(), ClientID: idp.ClientID(), ClientSecret: idp.ClientSecret(),
		Scopes: []string{"email", "profile"}, RedirectURL: redirect})
	a := oidc.NewAttempt("/staff", time.Now())
	authURL, err := p.AuthCodeURL(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `value="admin@club.example"`) {
		t.Fatalf("sign-in page: %d %s", res.StatusCode, body)
	}
	res, err = noFollow.Get(authURL + "&login_as=" + url.QueryEscape("Admin@Club.example"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), redirect) || loc.Query().Get("state") != a.State {
		t.Fatalf("authorize: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	tokens, err := p.Redeem(context.Background(), loc.Query().Get("code"), a)
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err := json.Unmarshal(tokens.Claims, &claims); err != nil || claims.Email != "admin@club.example" || !claims.Verified || tokens.Subject != "dev:admin@club.example" {
		t.Fatalf("claims %s subject %q: %v", tokens.Claims, tokens.Subject, err)
	}
}
