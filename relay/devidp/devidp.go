// Package devidp is a development identity provider: an OIDC issuer in
// the portal's own process (github.com/oauth2-proxy/mockoidc behind a
// small "sign in as" page), so that `make run` can show the staff pages
// without an IdP of one's own. It signs anyone in as any address with
// email_verified true, so it only ever starts for a portal on a loopback
// address, and only listens on 127.0.0.1.
package devidp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"sync"

	"github.com/oauth2-proxy/mockoidc"
)

// ErrNotLoopback refuses a development IdP for a portal that others can reach.
var ErrNotLoopback = errors.New("devidp: the development identity provider runs only for a portal on a loopback address (PORTAL_BASE_URL http://localhost:... or 127.0.0.1)")

// IdP is a running development identity provider.
type IdP struct {
	m *mockoidc.MockOIDC
	// Accounts suggests addresses on the sign-in page (the demo staff).
	accounts func(context.Context) []string
	// mu serialises every request: mockoidc's session map is not safe for
	// concurrent use, and it hands the next queued user to the next
	// authorisation, which must be the one that queued it.
	mu sync.Mutex
}

// Loopback reports whether the portal's base URL is on a loopback host.
func Loopback(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// Start starts a development IdP on 127.0.0.1 for a portal at baseURL,
// refusing any base URL that is not on a loopback host. accounts, when
// set, lists the addresses the sign-in page offers.
func Start(baseURL string, accounts func(context.Context) []string) (*IdP, error) {
	if !Loopback(baseURL) {
		return nil, ErrNotLoopback
	}
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return nil, err
	}
	idp := &IdP{m: m, accounts: accounts}
	if err := m.AddMiddleware(idp.serialise); err != nil {
		return nil, err
	}
	if err := m.AddMiddleware(idp.signInAs); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := m.Start(ln, nil); err != nil {
		ln.Close()
		return nil, err
	}
	return idp, nil
}

// Issuer is the IdP's issuer URL; it, ClientID and ClientSecret are the
// settings a client needs.
func (idp *IdP) Issuer() string       { return idp.m.Issuer() }
func (idp *IdP) ClientID() string     { return idp.m.ClientID }
func (idp *IdP) ClientSecret() string { return idp.m.ClientSecret }

// Close stops the IdP.
func (idp *IdP) Close() error { return idp.m.Shutdown() }

// loginAsParam carries the chosen address back to the authorisation endpoint.
const loginAsParam = "login_as"

var page = template.Must(template.New("signin").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development sign-in</title></head>
<body style="font-family:sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem">
<h1>Development sign-in</h1>
<p>This identity provider runs inside the portal for development only. Choose who you are; the address counts as verified.</p>
<form method="get" action="">
{{range $k, $v := .Params}}{{range $v}}<input type="hidden" name="{{$k}}" value="{{.}}">{{end}}{{end}}
{{if .Accounts}}<ul>{{range .Accounts}}<li><button type="submit" name="login_as" value="{{.}}" data-testid="dev-login-as">{{.}}</button></li>{{end}}</ul>{{end}}
<p><label for="as">Another address</label><br><input id="as" type="email" name="login_as" autocomplete="email"> <button type="submit">Sign in</button></p>
</form></body></html>`))

// signInAs puts a "sign in as" page in front of the authorisation
// endpoint: without a chosen address it asks for one; with one it queues
// that user and lets mockoidc issue the code.
func (idp *IdP) signInAs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mockoidc.AuthorizationEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		var as string
		for _, v := range q[loginAsParam] {
			if v = strings.TrimSpace(v); v != "" {
				as = v
			}
		}
		if as == "" {
			q.Del(loginAsParam)
			var accounts []string
			if idp.accounts != nil {
				accounts = idp.accounts(r.Context())
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = page.Execute(w, map[string]any{"Params": q, "Accounts": accounts})
			return
		}
		addr, err := mail.ParseAddress(as)
		if err != nil {
			http.Error(w, "not an e-mail address", http.StatusBadRequest)
			return
		}
		email := strings.ToLower(addr.Address)
		idp.m.QueueUser(&mockoidc.MockUser{Subject: "dev:" + email, Email: email, EmailVerified: true,
			PreferredUsername: strings.SplitN(email, "@", 2)[0]})
		next.ServeHTTP(w, r)
	})
}

// serialise runs one request at a time, and announces in the discovery
// document that the client authenticates in the form (all mockoidc reads),
// so that clients do not try HTTP Basic first.
func (idp *IdP) serialise(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idp.mu.Lock()
		defer idp.mu.Unlock()
		if r.URL.Path != mockoidc.DiscoveryEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			http.Error(w, "discovery failed", http.StatusInternalServerError)
			return
		}
		doc["token_endpoint_auth_methods_supported"] = []string{"client_secret_post"}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	})
}

// String describes the IdP for the start-up log.
func (idp *IdP) String() string { return fmt.Sprintf("development IdP at %s", idp.Issuer()) }
