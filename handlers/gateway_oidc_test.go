package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/gateway"
	"portal/handlers/server"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestOIDCLogin(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{})

	t.Run("code flow with PKCE, state and nonce ends in a new session and the requested address", func(t *testing.T) {
		c := env.newClient()
		env.hashLogin(c, "demo") // a session from before: the login must replace it
		before := env.sessionID(c)
		res := env.request(c, http.MethodGet, server.LoginPath+"?rd="+url.QueryEscape(gwPrefix+"/echo/x?a=1"), nil, "Accept", "text/html")
		if res.status != http.StatusFound {
			t.Fatalf("GET /login: %d", res.status)
		}
		idpURL, _ := url.Parse(res.header.Get("Location"))
		q := idpURL.Query()
		if !strings.HasPrefix(idpURL.String(), env.idp.m.AuthorizationEndpoint()) || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || len(q.Get("state")) < 40 || len(q.Get("nonce")) < 40 || q.Get("redirect_uri") != env.srv.URL+server.CallbackPath {
			t.Fatalf("IdP address %s lacks PKCE S256, state, nonce or the callback", idpURL)
		}
		attempt := res.header.Get("Set-Cookie")
		for _, want := range []string{"portal_login_", "Path=/oauth2/callback", "HttpOnly", "SameSite=Lax", "Max-Age=600"} {
			if !strings.Contains(attempt, want) {
				t.Errorf("attempt cookie %q lacks %s", attempt, want)
			}
		}
		if strings.Contains(attempt, q.Get("state")) || strings.Contains(attempt, q.Get("nonce")) {
			t.Error("the attempt cookie shows the state or nonce in clear")
		}
		res = env.request(c, http.MethodGet, idpURL.String(), nil) // the IdP signs the user in and sends them back
		callback := res.header.Get("Location")
		// A browser does not send the SameSite=Strict session cookie on the
		// IdP's cross-site redirect; the old session must end all the same.
		gwURL, _ := url.Parse(env.srv.URL)
		c.Jar.SetCookies(gwURL, []*http.Cookie{{Name: "JSESSIONID", Value: "", Path: "/", MaxAge: -1}})
		res = env.request(c, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.status != http.StatusSeeOther || res.header.Get("Location") != gwPrefix+"/echo/x?a=1" {
			t.Fatalf("callback: %d to %q, want 303 to the requested address", res.status, res.header.Get("Location"))
		}
		after := env.sessionID(c)
		if after == "" || after == before {
			t.Fatal("the OIDC login did not issue a new session id")
		}
		if _, err := env.store.Load(context.Background(), before); !errors.Is(err, session.ErrNotFound) {
			t.Fatal("the session from before the login still exists")
		}
		s := env.storedSession(c)
		for _, attr := range []string{session.AttrBackendJWT, session.AttrBackendJWTExpiry, oidc.AttrRefreshToken, oidc.AttrIDToken, oidc.AttrSubject} {
			if s.Values[attr] == "" {
				t.Errorf("session lacks %s", attr)
			}
		}
		// The callback cannot be replayed: its attempt is used up.
		res = env.request(c, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.status != http.StatusBadRequest {
			t.Fatalf("replayed callback: %d, want 400", res.status)
		}
	})

	t.Run("unsafe return addresses fall back to /", func(t *testing.T) {
		for _, rd := range []string{"//evil.example", "https://evil.example/", `/\evil.example`, "/%2F%2Fevil.example", "javascript:alert(1)"} {
			c := env.newClient()
			res := env.oidcLogin(c, rd)
			if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
				t.Errorf("rd=%q: %d to %q, want 303 to /", rd, res.status, res.header.Get("Location"))
			}
		}
	})

	t.Run("callback without its attempt cookie: error page, no session, no redirect", func(t *testing.T) {
		c := env.newClient()
		res := env.request(c, http.MethodGet, server.LoginPath, nil)
		idpURL := res.header.Get("Location")
		res = env.request(c, http.MethodGet, idpURL, nil)
		callback := res.header.Get("Location")
		other := env.newClient() // another browser: a login CSRF attempt
		res = env.request(other, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.status != http.StatusBadRequest || res.header.Get("Location") != "" || !strings.Contains(string(res.body), "Sign-in expired") {
			t.Fatalf("%d, Location %q", res.status, res.header.Get("Location"))
		}
		if env.sessionID(other) != "" {
			t.Fatal("a callback from another browser made a session")
		}
	})

	t.Run("IdP error: page, no loop", func(t *testing.T) {
		c := env.newClient()
		res := env.request(c, http.MethodGet, server.LoginPath, nil)
		idpURL, _ := url.Parse(res.header.Get("Location"))
		cb := server.CallbackPath + "?error=access_denied&state=" + url.QueryEscape(idpURL.Query().Get("state"))
		res = env.request(c, http.MethodGet, cb, nil, "Accept", "text/html")
		if res.status != http.StatusUnauthorized || res.header.Get("Location") != "" {
			t.Fatalf("%d, Location %q", res.status, res.header.Get("Location"))
		}
	})

	for _, tc := range []struct {
		mode   string
		status int
	}{{"fail", http.StatusBadGateway}, {"reject", http.StatusForbidden}} {
		t.Run("token exchange "+tc.mode+": token-exchange error page or JSON, no session, no loop", func(t *testing.T) {
			env.backend.exchangeMode.Store(tc.mode)
			defer env.backend.exchangeMode.Store("")
			for _, accept := range []string{"text/html", "application/json"} {
				c := env.newClient()
				res := env.request(c, http.MethodGet, server.LoginPath, nil)
				res = env.request(c, http.MethodGet, res.header.Get("Location"), nil)
				res = env.request(c, http.MethodGet, res.header.Get("Location"), nil, "Accept", accept)
				if res.status != tc.status || res.header.Get("Location") != "" {
					t.Fatalf("Accept %s: %d, Location %q", accept, res.status, res.header.Get("Location"))
				}
				if accept == "application/json" {
					e := expectHTTPError(t, res, tc.status, server.CallbackPath)
					if !strings.Contains(e.Message, "Token exchange failed") {
						t.Errorf("message %q does not name the token exchange", e.Message)
					}
				} else if !strings.Contains(string(res.body), "Token exchange failed") {
					t.Errorf("page does not name the token exchange: %.300s", res.body)
				}
				if env.sessionID(c) != "" {
					t.Fatal("a failed exchange made a session")
				}
			}
		})
	}

	t.Run("logins in two tabs finish independently", func(t *testing.T) {
		c := env.newClient()
		first := env.request(c, http.MethodGet, server.LoginPath+"?rd=/first", nil)
		second := env.request(c, http.MethodGet, server.LoginPath+"?rd=/second", nil)
		for _, tc := range []struct {
			res response
			rd  string
		}{{second, "/second"}, {first, "/first"}} {
			res := env.request(c, http.MethodGet, tc.res.header.Get("Location"), nil)
			res = env.request(c, http.MethodGet, res.header.Get("Location"), nil)
			if res.status != http.StatusSeeOther || res.header.Get("Location") != tc.rd {
				t.Fatalf("%d to %q, want %s", res.status, res.header.Get("Location"), tc.rd)
			}
		}
	})
}

func TestLogout(t *testing.T) {
	withAndWithoutCache(t, testLogout)
}

func testLogout(t *testing.T, o gwOptions) {
	env := newGateway(t, dbtest.SQLite(t), o)
	t.Run("hash session: ended, back to /", func(t *testing.T) {
		c := env.newClient()
		env.hashLogin(c, "demo")
		id := env.sessionID(c)
		if _, e := env.relayEcho(c); e.Authorization == "" { // through the cache, if there is one
			t.Fatal("the relay sends no token before the logout")
		}
		res := env.request(c, http.MethodPost, server.LogoutPath, nil, "Accept", "text/html")
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" || !strings.Contains(res.header.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("%d to %q, Set-Cookie %q", res.status, res.header.Get("Location"), res.header.Get("Set-Cookie"))
		}
		if _, err := env.store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
			t.Fatal("the session survived the logout")
		}
		// The old cookie, replayed at once, finds no session: a cache must
		// not serve what the logout ended.
		u, _ := url.Parse(env.srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: id, Path: "/"}})
		if _, e := env.relayEcho(c); e.Authorization != "" {
			t.Fatal("the relay still sends a token for the logged-out session")
		}
	})
	t.Run("OIDC session: ended, then the IdP's logout", func(t *testing.T) {
		c := env.newClient()
		env.mustOIDCLogin(c, "/")
		idToken := env.storedSession(c).Values[oidc.AttrIDToken]
		res := env.request(c, http.MethodPost, server.LogoutPath, nil, "Accept", "application/json")
		var body gateway.LogoutBody
		res.json(t, &body)
		u, err := url.Parse(body.Redirect)
		if err != nil || !strings.HasPrefix(body.Redirect, env.idp.m.Issuer()+"/logout?") || u.Query().Get("id_token_hint") != idToken ||
			u.Query().Get("post_logout_redirect_uri") != env.srv.URL+"/" || u.Query().Get("client_id") != env.idp.m.ClientID {
			t.Fatalf("redirect %q is not the IdP's logout for this session", body.Redirect)
		}
		if env.storedSession(c) != nil {
			t.Fatal("the session survived the logout")
		}
		if _, e := env.relayEcho(c); e.Authorization != "" {
			t.Fatal("the relay still sends a token after logout")
		}
	})
	t.Run("cross-site logout is refused", func(t *testing.T) {
		c := env.newClient()
		env.hashLogin(c, "demo")
		res := env.request(c, http.MethodPost, server.LogoutPath, nil, "Sec-Fetch-Site", "cross-site")
		if res.status != http.StatusForbidden || env.storedSession(c) == nil {
			t.Fatalf("cross-site logout: %d", res.status)
		}
	})
}

// Many concurrent requests of one session at expiry make one IdP refresh
// and one token exchange, and all get the new token.
func TestRefreshIsSingleFlight(t *testing.T) {
	withAndWithoutCache(t, testRefreshIsSingleFlight)
}

func testRefreshIsSingleFlight(t *testing.T, o gwOptions) {
	env := newGateway(t, dbtest.SQLite(t), o)
	env.backend.exchangeTTL.Store(int64(5 * time.Second))
	c := env.newClient()
	env.mustOIDCLogin(c, "/")
	env.backend.exchangeTTL.Store(int64(5 * time.Minute))
	refreshes, exchanges := env.idp.refreshes.Load(), env.backend.exchanges.Load()
	got := parallelRelay(t, 100, func(int) *gwEnv { return env }, c)
	if r, e := env.idp.refreshes.Load()-refreshes, env.backend.exchanges.Load()-exchanges; r != 1 || e != 1 {
		t.Fatalf("100 parallel requests at expiry made %d refreshes and %d exchanges, want 1 and 1", r, e)
	}
	want := "Bearer " + digest(env.storedSession(c).Values[session.AttrBackendJWT])
	for auth := range got {
		if auth != want {
			t.Fatalf("a request relayed %q, want the refreshed token", auth)
		}
	}
}

// parallelRelay sends n concurrent relayed requests with c's session, the
// i-th to instance(i), and returns the set of Authorization digests the
// backend saw.
func parallelRelay(t *testing.T, n int, instance func(i int) *gwEnv, c *http.Client) map[string]bool {
	t.Helper()
	id := sessionCookie(t, instance(0), c)
	auths := make(chan string, n)
	together(n, func(i int) {
		env := instance(i)
		req, _ := http.NewRequest(http.MethodGet, env.srv.URL+gwPrefix+"/echo/x", nil)
		req.Header.Set("Accept", "application/json")
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: id})
		res, err := env.client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer res.Body.Close()
		var e echoed
		if res.StatusCode != http.StatusOK || jsonDecode(res, &e) != nil {
			t.Errorf("request %d: %d", i, res.StatusCode)
			return
		}
		auths <- e.Authorization
	})
	close(auths)
	got := map[string]bool{}
	for a := range auths {
		got[a] = true
	}
	return got
}

func jsonDecode(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }

func sessionCookie(t *testing.T, env *gwEnv, c *http.Client) string {
	t.Helper()
	id := env.sessionID(c)
	if id == "" {
		t.Fatal("no session cookie")
	}
	return id
}

// Two gateway instances on one store: a session made on one works on the
// other, a logout on one ends it on both, and a refresh at expiry happens
// once across both.
func TestTwoInstancesShareSessions(t *testing.T) {
	relaySessionsOn(t, func(t *testing.T, db *bun.DB, instance func() gwOptions) {
		idp := newIdP(t)
		be := newBackend(t, idp)
		a := newGatewayWith(t, db, idp, be, instance())
		b := newGatewayWith(t, db, idp, be, instance())

		c := a.newClient()
		be.exchangeTTL.Store(int64(5 * time.Second))
		a.mustOIDCLogin(c, "/")
		be.exchangeTTL.Store(int64(5 * time.Minute))
		id := a.sessionID(c)
		onB := b.newClient()
		u, _ := url.Parse(b.srv.URL)
		onB.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: id, Path: "/"}})

		refreshes := idp.refreshes.Load()
		got := parallelRelay(t, 40, func(i int) *gwEnv {
			if i%2 == 0 {
				return a
			}
			return b
		}, c)
		if n := idp.refreshes.Load() - refreshes; n != 1 {
			t.Fatalf("40 requests at expiry over two instances made %d IdP refreshes, want 1", n)
		}
		if len(got) != 1 {
			t.Fatalf("the instances relayed %d different tokens, want 1", len(got))
		}

		// A hash session made on A works on B, and a logout on B ends it on A.
		h := a.newClient()
		a.hashLogin(h, "demo")
		hb := b.newClient()
		hb.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: a.sessionID(h), Path: "/"}})
		if _, e := b.relayEcho(hb); e.Authorization == "" {
			t.Fatal("a session made on A gives no token on B")
		}
		for range 2 { // the second read is served from A's cache, where there is one
			if _, e := a.relayEcho(h); e.Authorization == "" {
				t.Fatal("the session gives no token on A")
			}
		}
		if res := b.request(hb, http.MethodPost, server.LogoutPath, nil, "Accept", "application/json"); res.status != http.StatusOK {
			t.Fatalf("logout on B: %d", res.status)
		}
		if a.cache == nil {
			if _, e := a.relayEcho(h); e.Authorization != "" {
				t.Fatal("a logout on B did not end the session on A")
			}
			return
		}
		// With caches the logout reaches A over the bus, within its
		// delivery time; the caches' TTL is a minute, so nothing else can.
		sessiontest.WaitFor(t, 2*time.Second, "the logout on B to end the session on A", func() bool {
			_, e := a.relayEcho(h)
			return e.Authorization == ""
		})
		if st := a.cache.Stats(); st.Hits == 0 || st.Invalidations == 0 {
			t.Fatalf("A's cache was not exercised: %+v", st)
		}
	})
}

// errorRecorder stands in for a *testing.T to see what a check reports.
type errorRecorder struct{ errors []string }

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// The leak scan that guards every gateway test must be able to fail.
func TestLeakScanCatchesSecrets(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln"
	for name, res := range map[string]string{
		"header":         "GET / -> 200\nX-Debug: Bearer " + jwt + "\n",
		"body":           "GET / -> 200\n\n{\"token\":\"" + jwt + "\"}",
		"payload alone":  "GET / -> 200\n\neyJzdWIiOiJ1In0",
		"api key base64": "GET / -> 200\n\n" + base64.StdEncoding.EncodeToString([]byte(gwAPIKey)),
	} {
		var s leakScan
		s.add(res)
		var rec errorRecorder
		s.check(&rec, []string{jwt, gwAPIKey})
		if len(rec.errors) == 0 {
			t.Errorf("%s: a leaked secret went unnoticed", name)
		}
	}
	var s leakScan
	s.add("GET / -> 200\n\n{\"authorization\":\"Bearer " + digest(jwt) + "\"}")
	var rec errorRecorder
	s.check(&rec, []string{jwt, gwAPIKey})
	if len(rec.errors) != 0 {
		t.Errorf("a digest of the token counted as a leak: %v", rec.errors)
	}
}
