package gateway_test

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
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestOIDCLogin(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{})

	t.Run("code flow with PKCE, state and nonce ends in a new session and the requested address", func(t *testing.T) {
		c := env.NewClient()
		env.HashLogin(c, "demo") // a session from before: the login must replace it
		before := env.SessionID(c)
		res := env.Request(c, http.MethodGet, server.LoginPath+"?rd="+url.QueryEscape(handlertest.GatewayPrefix+"/echo/x?a=1"), nil, "Accept", "text/html")
		if res.Status != http.StatusFound {
			t.Fatalf("GET /login: %d", res.Status)
		}
		idpURL, _ := url.Parse(res.Header.Get("Location"))
		q := idpURL.Query()
		if !strings.HasPrefix(idpURL.String(), env.Idp.Mock.AuthorizationEndpoint()) || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || len(q.Get("state")) < 40 || len(q.Get("nonce")) < 40 || q.Get("redirect_uri") != env.Srv.URL+server.CallbackPath {
			t.Fatalf("IdP address %s lacks PKCE S256, state, nonce or the callback", idpURL)
		}
		attempt := res.Header.Get("Set-Cookie")
		for _, want := range []string{"portal_login_", "Path=/oauth2/callback", "HttpOnly", "SameSite=Lax", "Max-Age=600"} {
			if !strings.Contains(attempt, want) {
				t.Errorf("attempt cookie %q lacks %s", attempt, want)
			}
		}
		if strings.Contains(attempt, q.Get("state")) || strings.Contains(attempt, q.Get("nonce")) {
			t.Error("the attempt cookie shows the state or nonce in clear")
		}
		res = env.Request(c, http.MethodGet, idpURL.String(), nil) // the IdP signs the user in and sends them back
		callback := res.Header.Get("Location")
		// A browser does not send the SameSite=Strict session cookie on the
		// IdP's cross-site redirect; the old session must end all the same.
		gwURL, _ := url.Parse(env.Srv.URL)
		c.Jar.SetCookies(gwURL, []*http.Cookie{{Name: "JSESSIONID", Value: "", Path: "/", MaxAge: -1}})
		res = env.Request(c, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != handlertest.GatewayPrefix+"/echo/x?a=1" {
			t.Fatalf("callback: %d to %q, want 303 to the requested address", res.Status, res.Header.Get("Location"))
		}
		after := env.SessionID(c)
		if after == "" || after == before {
			t.Fatal("the OIDC login did not issue a new session id")
		}
		if _, err := env.Store.Load(context.Background(), before); !errors.Is(err, session.ErrNotFound) {
			t.Fatal("the session from before the login still exists")
		}
		s := env.StoredSession(c)
		for _, attr := range []string{session.AttrBackendJWT, session.AttrBackendJWTExpiry, oidc.AttrRefreshToken, oidc.AttrIDToken, oidc.AttrSubject} {
			if s.Values[attr] == "" {
				t.Errorf("session lacks %s", attr)
			}
		}
		// The callback cannot be replayed: its attempt is used up.
		res = env.Request(c, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.Status != http.StatusBadRequest {
			t.Fatalf("replayed callback: %d, want 400", res.Status)
		}
	})

	t.Run("unsafe return addresses fall back to /", func(t *testing.T) {
		for _, rd := range []string{"//evil.example", "https://evil.example/", `/\evil.example`, "/%2F%2Fevil.example", "javascript:alert(1)"} {
			c := env.NewClient()
			res := env.OIDCLogin(c, rd)
			if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/" {
				t.Errorf("rd=%q: %d to %q, want 303 to /", rd, res.Status, res.Header.Get("Location"))
			}
		}
	})

	t.Run("callback without its attempt cookie: error page, no session, no redirect", func(t *testing.T) {
		c := env.NewClient()
		res := env.Request(c, http.MethodGet, server.LoginPath, nil)
		idpURL := res.Header.Get("Location")
		res = env.Request(c, http.MethodGet, idpURL, nil)
		callback := res.Header.Get("Location")
		other := env.NewClient() // another browser: a login CSRF attempt
		res = env.Request(other, http.MethodGet, callback, nil, "Accept", "text/html")
		if res.Status != http.StatusBadRequest || res.Header.Get("Location") != "" || !strings.Contains(string(res.Body), "Sign-in expired") {
			t.Fatalf("%d, Location %q", res.Status, res.Header.Get("Location"))
		}
		if env.SessionID(other) != "" {
			t.Fatal("a callback from another browser made a session")
		}
	})

	t.Run("IdP error: page, no loop", func(t *testing.T) {
		c := env.NewClient()
		res := env.Request(c, http.MethodGet, server.LoginPath, nil)
		idpURL, _ := url.Parse(res.Header.Get("Location"))
		cb := server.CallbackPath + "?error=access_denied&state=" + url.QueryEscape(idpURL.Query().Get("state"))
		res = env.Request(c, http.MethodGet, cb, nil, "Accept", "text/html")
		if res.Status != http.StatusUnauthorized || res.Header.Get("Location") != "" {
			t.Fatalf("%d, Location %q", res.Status, res.Header.Get("Location"))
		}
	})

	for _, tc := range []struct {
		mode   string
		status int
	}{{"fail", http.StatusBadGateway}, {"reject", http.StatusForbidden}} {
		t.Run("token exchange "+tc.mode+": token-exchange error page or JSON, no session, no loop", func(t *testing.T) {
			env.Backend.ExchangeMode.Store(tc.mode)
			defer env.Backend.ExchangeMode.Store("")
			for _, accept := range []string{"text/html", "application/json"} {
				c := env.NewClient()
				res := env.Request(c, http.MethodGet, server.LoginPath, nil)
				res = env.Request(c, http.MethodGet, res.Header.Get("Location"), nil)
				res = env.Request(c, http.MethodGet, res.Header.Get("Location"), nil, "Accept", accept)
				if res.Status != tc.status || res.Header.Get("Location") != "" {
					t.Fatalf("Accept %s: %d, Location %q", accept, res.Status, res.Header.Get("Location"))
				}
				if accept == "application/json" {
					e := handlertest.ExpectHTTPError(t, res, tc.status, server.CallbackPath)
					if !strings.Contains(e.Message, "Token exchange failed") {
						t.Errorf("message %q does not name the token exchange", e.Message)
					}
				} else if !strings.Contains(string(res.Body), "Token exchange failed") {
					t.Errorf("page does not name the token exchange: %.300s", res.Body)
				}
				if env.SessionID(c) != "" {
					t.Fatal("a failed exchange made a session")
				}
			}
		})
	}

	t.Run("logins in two tabs finish independently", func(t *testing.T) {
		c := env.NewClient()
		first := env.Request(c, http.MethodGet, server.LoginPath+"?rd=/first", nil)
		second := env.Request(c, http.MethodGet, server.LoginPath+"?rd=/second", nil)
		for _, tc := range []struct {
			res handlertest.Response
			rd  string
		}{{second, "/second"}, {first, "/first"}} {
			res := env.Request(c, http.MethodGet, tc.res.Header.Get("Location"), nil)
			res = env.Request(c, http.MethodGet, res.Header.Get("Location"), nil)
			if res.Status != http.StatusSeeOther || res.Header.Get("Location") != tc.rd {
				t.Fatalf("%d to %q, want %s", res.Status, res.Header.Get("Location"), tc.rd)
			}
		}
	})
}

func TestLogout(t *testing.T) {
	withAndWithoutCache(t, testLogout)
}

func testLogout(t *testing.T, o handlertest.GatewayOptions) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), o)
	t.Run("hash session: ended, back to /", func(t *testing.T) {
		c := env.NewClient()
		env.HashLogin(c, "demo")
		id := env.SessionID(c)
		if _, e := env.RelayEcho(c); e.Authorization == "" { // through the cache, if there is one
			t.Fatal("the relay sends no token before the logout")
		}
		res := env.Request(c, http.MethodPost, server.LogoutPath, nil, "Accept", "text/html")
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/" || !strings.Contains(res.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("%d to %q, Set-Cookie %q", res.Status, res.Header.Get("Location"), res.Header.Get("Set-Cookie"))
		}
		if _, err := env.Store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
			t.Fatal("the session survived the logout")
		}
		// The old cookie, replayed at once, finds no session: a cache must
		// not serve what the logout ended.
		u, _ := url.Parse(env.Srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: id, Path: "/"}})
		if _, e := env.RelayEcho(c); e.Authorization != "" {
			t.Fatal("the relay still sends a token for the logged-out session")
		}
	})
	t.Run("OIDC session: ended, then the IdP's logout", func(t *testing.T) {
		c := env.NewClient()
		env.MustOIDCLogin(c, "/")
		idToken := env.StoredSession(c).Values[oidc.AttrIDToken]
		res := env.Request(c, http.MethodPost, server.LogoutPath, nil, "Accept", "application/json")
		var body gateway.LogoutBody
		res.JSON(t, &body)
		u, err := url.Parse(body.Redirect)
		if err != nil || !strings.HasPrefix(body.Redirect, env.Idp.Mock.Issuer()+"/logout?") || u.Query().Get("id_token_hint") != idToken ||
			u.Query().Get("post_logout_redirect_uri") != env.Srv.URL+"/" || u.Query().Get("client_id") != env.Idp.Mock.ClientID {
			t.Fatalf("redirect %q is not the IdP's logout for this session", body.Redirect)
		}
		if env.StoredSession(c) != nil {
			t.Fatal("the session survived the logout")
		}
		if _, e := env.RelayEcho(c); e.Authorization != "" {
			t.Fatal("the relay still sends a token after logout")
		}
	})
	t.Run("cross-site logout is refused", func(t *testing.T) {
		c := env.NewClient()
		env.HashLogin(c, "demo")
		res := env.Request(c, http.MethodPost, server.LogoutPath, nil, "Sec-Fetch-Site", "cross-site")
		if res.Status != http.StatusForbidden || env.StoredSession(c) == nil {
			t.Fatalf("cross-site logout: %d", res.Status)
		}
	})
}

// Many concurrent requests of one session at expiry make one IdP refresh
// and one token exchange, and all get the new token.
func TestRefreshIsSingleFlight(t *testing.T) {
	withAndWithoutCache(t, testRefreshIsSingleFlight)
}

func testRefreshIsSingleFlight(t *testing.T, o handlertest.GatewayOptions) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), o)
	env.Backend.ExchangeTTL.Store(int64(5 * time.Second))
	c := env.NewClient()
	env.MustOIDCLogin(c, "/")
	env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
	refreshes, exchanges := env.Idp.Refreshes.Load(), env.Backend.Exchanges.Load()
	got := parallelRelay(t, 100, func(int) *handlertest.GatewayEnv { return env }, c)
	if r, e := env.Idp.Refreshes.Load()-refreshes, env.Backend.Exchanges.Load()-exchanges; r != 1 || e != 1 {
		t.Fatalf("100 parallel requests at expiry made %d refreshes and %d exchanges, want 1 and 1", r, e)
	}
	want := "Bearer " + handlertest.Digest(env.StoredSession(c).Values[session.AttrBackendJWT])
	for auth := range got {
		if auth != want {
			t.Fatalf("a request relayed %q, want the refreshed token", auth)
		}
	}
}

// parallelRelay sends n concurrent relayed requests with c's session, the
// i-th to instance(i), and returns the set of Authorization digests the
// backend saw.
func parallelRelay(t *testing.T, n int, instance func(i int) *handlertest.GatewayEnv, c *http.Client) map[string]bool {
	t.Helper()
	id := sessionCookie(t, instance(0), c)
	auths := make(chan string, n)
	handlertest.Together(n, func(i int) {
		env := instance(i)
		req, _ := http.NewRequest(http.MethodGet, env.Srv.URL+handlertest.GatewayPrefix+"/echo/x", nil)
		req.Header.Set("Accept", "application/json")
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: id})
		res, err := env.Client.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer res.Body.Close()
		var e handlertest.Echoed
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

func sessionCookie(t *testing.T, env *handlertest.GatewayEnv, c *http.Client) string {
	t.Helper()
	id := env.SessionID(c)
	if id == "" {
		t.Fatal("no session cookie")
	}
	return id
}

// Two gateway instances on one store: a session made on one works on the
// other, a logout on one ends it on both, and a refresh at expiry happens
// once across both.
func TestTwoInstancesShareSessions(t *testing.T) {
	relaySessionsOn(t, func(t *testing.T, db *bun.DB, instance func() handlertest.GatewayOptions) {
		idp := handlertest.NewIdP(t)
		be := handlertest.NewBackend(t, idp)
		a := handlertest.NewGatewayWith(t, db, idp, be, instance())
		b := handlertest.NewGatewayWith(t, db, idp, be, instance())

		c := a.NewClient()
		be.ExchangeTTL.Store(int64(5 * time.Second))
		a.MustOIDCLogin(c, "/")
		be.ExchangeTTL.Store(int64(5 * time.Minute))
		id := a.SessionID(c)
		onB := b.NewClient()
		u, _ := url.Parse(b.Srv.URL)
		onB.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: id, Path: "/"}})

		refreshes := idp.Refreshes.Load()
		got := parallelRelay(t, 40, func(i int) *handlertest.GatewayEnv {
			if i%2 == 0 {
				return a
			}
			return b
		}, c)
		if n := idp.Refreshes.Load() - refreshes; n != 1 {
			t.Fatalf("40 requests at expiry over two instances made %d IdP refreshes, want 1", n)
		}
		if len(got) != 1 {
			t.Fatalf("the instances relayed %d different tokens, want 1", len(got))
		}

		// A hash session made on A works on B, and a logout on B ends it on A.
		h := a.NewClient()
		a.HashLogin(h, "demo")
		hb := b.NewClient()
		hb.Jar.SetCookies(u, []*http.Cookie{{Name: "JSESSIONID", Value: a.SessionID(h), Path: "/"}})
		if _, e := b.RelayEcho(hb); e.Authorization == "" {
			t.Fatal("a session made on A gives no token on B")
		}
		for range 2 { // the second read is served from A's cache, where there is one
			if _, e := a.RelayEcho(h); e.Authorization == "" {
				t.Fatal("the session gives no token on A")
			}
		}
		if res := b.Request(hb, http.MethodPost, server.LogoutPath, nil, "Accept", "application/json"); res.Status != http.StatusOK {
			t.Fatalf("logout on B: %d", res.Status)
		}
		if a.Cache == nil {
			if _, e := a.RelayEcho(h); e.Authorization != "" {
				t.Fatal("a logout on B did not end the session on A")
			}
			return
		}
		// With caches the logout reaches A over the bus, within its
		// delivery time; the caches' TTL is a minute, so nothing else can.
		sessiontest.WaitFor(t, 2*time.Second, "the logout on B to end the session on A", func() bool {
			_, e := a.RelayEcho(h)
			return e.Authorization == ""
		})
		if st := a.Cache.Stats(); st.Hits == 0 || st.Invalidations == 0 {
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
		"api key base64": "GET / -> 200\n\n" + base64.StdEncoding.EncodeToString([]byte(handlertest.GatewayAPIKey)),
	} {
		var s handlertest.LeakScan
		s.Add(res)
		var rec errorRecorder
		s.Check(&rec, []string{jwt, handlertest.GatewayAPIKey})
		if len(rec.errors) == 0 {
			t.Errorf("%s: a leaked secret went unnoticed", name)
		}
	}
	var s handlertest.LeakScan
	s.Add("GET / -> 200\n\n{\"authorization\":\"Bearer " + handlertest.Digest(jwt) + "\"}")
	var rec errorRecorder
	s.Check(&rec, []string{jwt, handlertest.GatewayAPIKey})
	if len(rec.errors) != 0 {
		t.Errorf("a digest of the token counted as a leak: %v", rec.errors)
	}
}
