package gateway_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine/dbtest"
	"portal/handlers/gateway"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestRelayWithoutBackend(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoBackend: true})
	for _, accept := range []string{"application/json", "text/html"} {
		res := env.Request(env.Client, http.MethodPost, handlertest.GatewayPrefix+"/api/events", strings.NewReader(`{}`), "Accept", accept, "Content-Type", "application/json")
		e := handlertest.ExpectHTTPError(t, res, http.StatusServiceUnavailable, handlertest.GatewayPrefix+"/api/events")
		if !strings.Contains(e.Message, "not configured") {
			t.Errorf("message %q does not say the backend is not configured", e.Message)
		}
	}
	if res := env.Request(env.Client, http.MethodGet, server.LoginPath, nil); res.Status != http.StatusNotFound {
		t.Errorf("GET /login without OIDC: %d, want 404", res.Status)
	}
	// The hash login works as before, without a backend call.
	if res := env.HashLogin(env.Client, "demo"); res.Status != http.StatusOK {
		t.Fatalf("hash login without a backend: %d %s", res.Status, res.Body)
	}
	if s := env.StoredSession(env.Client); s == nil || s.Values[session.AttrBackendJWT] != "" {
		t.Fatalf("session %+v, want one without a backend JWT", s)
	}
	if n := env.Backend.Logins.Load(); n != 0 {
		t.Fatalf("backend logins = %d without a backend configured", n)
	}
}

func TestHashLoginCallsBackend(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true})
	t.Run("backend accepts: JWT stored without expiry and relayed", func(t *testing.T) {
		c := env.NewClient()
		if res := env.HashLogin(c, "demo"); res.Status != http.StatusOK || len(res.Body) != 0 {
			t.Fatalf("login: %d %q, want 200 and an empty body", res.Status, res.Body)
		}
		s := env.StoredSession(c)
		if s == nil || s.UserKey != "demo" || s.Values[session.AttrBackendJWT] != env.Backend.LastIssued() {
			t.Fatalf("session %+v does not hold the backend's JWT", s)
		}
		if _, ok := s.Values[session.AttrBackendJWTExpiry]; ok {
			t.Fatalf("a hash login set %s", session.AttrBackendJWTExpiry)
		}
		_, e := env.RelayEcho(c)
		if e.Authorization != "Bearer "+handlertest.Digest(s.Values[session.AttrBackendJWT]) {
			t.Fatalf("backend got Authorization %q, want the session's JWT", e.Authorization)
		}
	})
	for _, tc := range []struct {
		mode   string
		status int
	}{{"reject", http.StatusUnauthorized}, {"fail", http.StatusBadGateway}} {
		t.Run("backend "+tc.mode, func(t *testing.T) {
			env.Backend.LoginMode.Store(tc.mode)
			defer env.Backend.LoginMode.Store("")
			c := env.NewClient()
			res := env.HashLogin(c, "demo")
			handlertest.ExpectHTTPError(t, res, tc.status, "/api/auth/external-login")
			if res.Header.Get("Set-Cookie") != "" || env.SessionID(c) != "" {
				t.Fatal("a failed login set a session cookie")
			}
		})
	}
	t.Run("backend down", func(t *testing.T) {
		down := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true})
		down.Backend.Srv.Close()
		c := down.NewClient()
		res := down.HashLogin(c, "demo")
		handlertest.ExpectHTTPError(t, res, http.StatusBadGateway, "/api/auth/external-login")
		if down.SessionID(c) != "" {
			t.Fatal("a failed login set a session cookie")
		}
	})
	t.Run("wrong hash never reaches the backend", func(t *testing.T) {
		before := env.Backend.Logins.Load()
		res := env.Request(env.NewClient(), http.MethodPost, "/api/auth/external-login",
			strings.NewReader(`{"userKey":"demo","hash":"00000000000000000000000000000000"}`), "Content-Type", "application/json")
		handlertest.ExpectHTTPError(t, res, http.StatusUnauthorized, "/api/auth/external-login")
		if env.Backend.Logins.Load() != before {
			t.Fatal("the backend was asked about a login whose hash is wrong")
		}
	})
}

// One test per row of the spec's relay filter table.
func TestRelayFilterTable(t *testing.T) {
	withAndWithoutCache(t, testRelayFilterTable)
}

func testRelayFilterTable(t *testing.T, o handlertest.GatewayOptions) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), o)

	t.Run("guest: no Authorization, inbound one dropped", func(t *testing.T) {
		res, e := env.RelayEcho(env.NewClient(), "Authorization", "Bearer forged-by-the-client")
		if res.Status != http.StatusOK || e.Authorization != "" {
			t.Fatalf("%d, backend got Authorization %q; want none", res.Status, e.Authorization)
		}
	})

	t.Run("hash login without expiry: token relayed as it is, replacing the inbound one", func(t *testing.T) {
		c := env.NewClient()
		env.HashLogin(c, "demo")
		jwt := env.StoredSession(c).Values[session.AttrBackendJWT]
		_, e := env.RelayEcho(c, "Authorization", "Bearer forged-by-the-client")
		if e.Authorization != "Bearer "+handlertest.Digest(jwt) {
			t.Fatalf("backend got %q, want the session's JWT", e.Authorization)
		}
	})

	t.Run("non-OIDC token past its exp: session cleared, passed through without Authorization", func(t *testing.T) {
		env.Backend.LoginTTL.Store(int64(-time.Minute)) // the backend hands out an expired token
		defer env.Backend.LoginTTL.Store(0)
		c := env.NewClient()
		env.HashLogin(c, "demo")
		id := env.SessionID(c)
		res, e := env.RelayEcho(c)
		if res.Status != http.StatusOK || e.Authorization != "" {
			t.Fatalf("%d, backend got Authorization %q; want the request passed on without", res.Status, e.Authorization)
		}
		if !strings.Contains(res.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("Set-Cookie %q does not clear the session cookie", res.Header.Get("Set-Cookie"))
		}
		if _, err := env.Store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("the session is still in the store: %v", err)
		}
	})

	t.Run("OIDC token valid beyond now+30s: relayed, no refresh", func(t *testing.T) {
		env.Backend.ExchangeTTL.Store(int64(31 * time.Second)) // just outside the window
		defer env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
		c := env.NewClient()
		env.MustOIDCLogin(c, "/")
		jwt := env.StoredSession(c).Values[session.AttrBackendJWT]
		refreshes := env.Idp.Refreshes.Load()
		_, e := env.RelayEcho(c)
		if e.Authorization != "Bearer "+handlertest.Digest(jwt) {
			t.Fatalf("backend got %q, want the session's JWT", e.Authorization)
		}
		if env.Idp.Refreshes.Load() != refreshes {
			t.Fatal("a token valid for 31 s was refreshed")
		}
	})

	t.Run("OIDC token expiring: refreshed, exchanged, stored and relayed", func(t *testing.T) {
		env.Backend.ExchangeTTL.Store(int64(29 * time.Second)) // inside the 30 s window
		c := env.NewClient()
		env.MustOIDCLogin(c, "/")
		old := env.StoredSession(c)
		env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
		refreshes, exchanges := env.Idp.Refreshes.Load(), env.Backend.Exchanges.Load()
		_, e := env.RelayEcho(c)
		if env.Idp.Refreshes.Load() != refreshes+1 || env.Backend.Exchanges.Load() != exchanges+1 {
			t.Fatalf("refreshes +%d, exchanges +%d; want one each", env.Idp.Refreshes.Load()-refreshes, env.Backend.Exchanges.Load()-exchanges)
		}
		now := env.StoredSession(c)
		if now.ID != old.ID || now.Values[session.AttrBackendJWT] == old.Values[session.AttrBackendJWT] {
			t.Fatal("the session does not hold a new JWT")
		}
		if e.Authorization != "Bearer "+handlertest.Digest(now.Values[session.AttrBackendJWT]) {
			t.Fatalf("backend got %q, want the new JWT", e.Authorization)
		}
		if exp, _ := oidc.Expiry(now); time.Until(exp) < 4*time.Minute {
			t.Fatalf("stored expiry %v is not the new token's", exp)
		}
		if _, e := env.RelayEcho(c); e.Authorization != "Bearer "+handlertest.Digest(now.Values[session.AttrBackendJWT]) || env.Idp.Refreshes.Load() != refreshes+1 {
			t.Fatal("the refreshed token was not reused")
		}
	})

	t.Run("OIDC refresh refused: navigation to the login, API call 401 with the login URL, session ended", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			method  string
			headers []string
			nav     bool
		}{
			{"page navigation", http.MethodGet, []string{"Accept", "text/html,application/xhtml+xml", "Sec-Fetch-Mode", "navigate"}, true},
			{"XHR", http.MethodGet, []string{"Accept", "*/*", "X-Requested-With", "XMLHttpRequest"}, false},
			{"htmx", http.MethodGet, []string{"Accept", "text/html", "HX-Request", "true"}, false},
			{"JSON POST", http.MethodPost, []string{"Accept", "application/json", "Content-Type", "application/json"}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				env.Backend.ExchangeTTL.Store(int64(10 * time.Second))
				c := env.NewClient()
				env.MustOIDCLogin(c, "/")
				env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
				env.Idp.RefreshMode.Store("invalid_grant")
				defer env.Idp.RefreshMode.Store("")
				id := env.SessionID(c)
				res := env.Request(c, tc.method, handlertest.GatewayPrefix+"/echo/page?x=1", strings.NewReader(`{}`), tc.headers...)
				if tc.nav {
					if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/login?rd="+url.QueryEscape(handlertest.GatewayPrefix+"/echo/page?x=1") {
						t.Fatalf("%d to %q, want 303 to the login returning here", res.Status, res.Header.Get("Location"))
					}
				} else {
					var body gateway.LoginRequiredBody
					res.JSON(t, &body)
					if res.Status != http.StatusUnauthorized || body.Status != 401 || body.LoginURL == "" || !strings.HasPrefix(body.LoginURL, "/login") || body.Path != handlertest.GatewayPrefix+"/echo/page" {
						t.Fatalf("%d %s, want 401 with a loginUrl", res.Status, res.Body)
					}
				}
				if _, err := env.Store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
					t.Fatalf("after invalid_grant the session is still in the store: %v", err)
				}
				if !strings.Contains(res.Header.Get("Set-Cookie"), "Max-Age=0") {
					t.Errorf("the session cookie was not cleared: %q", res.Header.Get("Set-Cookie"))
				}
			})
		}
	})

	t.Run("OIDC refresh network error: session kept; old token while valid, then 503, then recovery", func(t *testing.T) {
		env.Backend.ExchangeTTL.Store(int64(20 * time.Second))
		c := env.NewClient()
		env.MustOIDCLogin(c, "/")
		old := env.StoredSession(c).Values[session.AttrBackendJWT]
		env.Idp.RefreshMode.Store("down")
		defer env.Idp.RefreshMode.Store("")
		res, e := env.RelayEcho(c)
		if res.Status != http.StatusOK || e.Authorization != "Bearer "+handlertest.Digest(old) {
			t.Fatalf("%d %q, want the old, still valid token relayed", res.Status, e.Authorization)
		}
		// Now the token has expired as well: 503, and the session stays.
		// (Written through the Manager, as any instance would, so that a
		// session cache hears of it.)
		s := env.StoredSession(c)
		s.Values[session.AttrBackendJWTExpiry] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
		if err := env.Sessions.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		res, _ = env.RelayEcho(c)
		handlertest.ExpectHTTPError(t, res, http.StatusServiceUnavailable, handlertest.GatewayPrefix+"/echo/x")
		if env.StoredSession(c) == nil {
			t.Fatal("a network error ended the session")
		}
		env.Idp.RefreshMode.Store("")
		env.Backend.ExchangeTTL.Store(int64(5 * time.Minute))
		res, e = env.RelayEcho(c)
		if res.Status != http.StatusOK || e.Authorization != "Bearer "+handlertest.Digest(env.StoredSession(c).Values[session.AttrBackendJWT]) || e.Authorization == "Bearer "+handlertest.Digest(old) {
			t.Fatalf("%d %q, want a fresh token without a new login", res.Status, e.Authorization)
		}
	})
}

func TestRelayForwarding(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{ResponseTTO: time.Second, MaxBody: 1024})
	c := env.NewClient()
	env.HashLogin(c, "demo")

	t.Run("method, path without prefix, query, body, forwarded headers", func(t *testing.T) {
		res := env.Request(c, http.MethodPut, handlertest.GatewayPrefix+"/echo/api/events/7?a=1&b=x%20y", strings.NewReader(`{"name":"regatta"}`),
			"Content-Type", "application/json", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example", "X-Api-Key", "guessed")
		var e handlertest.Echoed
		res.JSON(t, &e)
		u, _ := url.Parse(env.Srv.URL)
		want := map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": u.Host, "X-Forwarded-Prefix": handlertest.GatewayPrefix}
		for h, v := range want {
			if got := strings.Join(e.Headers[h], ","); got != v {
				t.Errorf("%s = %q, want %q (headers from an untrusted client are replaced)", h, got, v)
			}
		}
		if e.Method != http.MethodPut || e.Path != "/echo/api/events/7" || e.RawQuery != "a=1&b=x%20y" || e.Body != `{"name":"regatta"}` {
			t.Errorf("backend got %s %s ? %s %q", e.Method, e.Path, e.RawQuery, e.Body)
		}
		if _, ok := e.Headers["X-Api-Key"]; ok {
			t.Error("a client's X-Api-Key was relayed")
		}
	})

	t.Run("gateway cookies are not forwarded, others are", func(t *testing.T) {
		u, _ := url.Parse(env.Srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "theme", Value: "dark"}, {Name: "portal_login_0123456789abcdef", Value: "x"}})
		_, e := env.RelayEcho(c)
		cookies := strings.Join(e.Headers["Cookie"], ";")
		if strings.Contains(cookies, "JSESSIONID") || strings.Contains(cookies, "portal_login_") || !strings.Contains(cookies, "theme=dark") {
			t.Fatalf("backend got Cookie %q", cookies)
		}
	})

	t.Run("api-docs servers reflect X-Forwarded-Prefix", func(t *testing.T) {
		res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/v3/api-docs", nil)
		var doc struct{ Servers []struct{ URL string } }
		res.JSON(t, &doc)
		if len(doc.Servers) != 1 || doc.Servers[0].URL != env.Srv.URL+handlertest.GatewayPrefix {
			t.Fatalf("servers %+v, want %s", doc.Servers, env.Srv.URL+handlertest.GatewayPrefix)
		}
	})

	t.Run("responses stream", func(t *testing.T) {
		res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/stream", nil)
		if res.Status != http.StatusOK || string(res.Body) != "data: 0\n\ndata: 1\n\ndata: 2\n\n" || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %q", res.Status, res.Body)
		}
	})

	t.Run("body over the limit: 413", func(t *testing.T) {
		big := strings.Repeat("x", 1025)
		res := env.Request(c, http.MethodPost, handlertest.GatewayPrefix+"/echo/upload", strings.NewReader(big), "Content-Type", "text/plain")
		handlertest.ExpectHTTPError(t, res, http.StatusRequestEntityTooLarge, handlertest.GatewayPrefix+"/echo/upload")
		// Chunked, so no Content-Length tells in advance.
		res = env.Request(c, http.MethodPost, handlertest.GatewayPrefix+"/echo/upload", struct{ *strings.Reader }{strings.NewReader(big)}, "Content-Type", "text/plain")
		handlertest.ExpectHTTPError(t, res, http.StatusRequestEntityTooLarge, handlertest.GatewayPrefix+"/echo/upload")
		res = env.Request(c, http.MethodPost, handlertest.GatewayPrefix+"/echo/upload", strings.NewReader(big[:1024]), "Content-Type", "text/plain")
		if res.Status != http.StatusOK {
			t.Fatalf("a body of exactly the limit: %d", res.Status)
		}
	})

	t.Run("slow backend: 504", func(t *testing.T) {
		res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/slow", nil)
		handlertest.ExpectHTTPError(t, res, http.StatusGatewayTimeout, handlertest.GatewayPrefix+"/slow")
	})

	t.Run("dot segments: 400", func(t *testing.T) {
		res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/echo/%2e%2e/admin", nil)
		handlertest.ExpectHTTPError(t, res, http.StatusBadRequest, handlertest.GatewayPrefix+"/echo/../admin")
	})

	t.Run("backend down: 502, and the gateway stays up", func(t *testing.T) {
		down := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true})
		dc := down.NewClient()
		down.HashLogin(dc, "demo")
		down.Backend.Srv.Close()
		res := down.Request(dc, http.MethodGet, handlertest.GatewayPrefix+"/echo/x", nil, "Accept", "text/html")
		handlertest.ExpectHTTPError(t, res, http.StatusBadGateway, handlertest.GatewayPrefix+"/echo/x")
		if res := down.Request(dc, http.MethodGet, "/healthz", nil); res.Status != http.StatusOK {
			t.Fatalf("healthz after a relay failure: %d", res.Status)
		}
	})
}

func TestRelayBehindTrustedProxy(t *testing.T) {
	tests := []struct {
		name    string
		proxies []netip.Prefix
		trusted bool
	}{
		{"peer is a trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, true},
		{"peer is not a trusted proxy", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, TrustedProxies: tt.proxies})
			c := env.NewClient()
			fwd := []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-Host", "portal.example", "X-Forwarded-Prefix", "/portal"}
			body := `{"userKey":"demo","hash":"` + hashlink.Sign(handlertest.HashSecret, "demo") + `"}`
			res := env.Request(c, http.MethodPost, "/api/auth/external-login", strings.NewReader(body), append([]string{"Content-Type", "application/json"}, fwd...)...)
			if res.Status != http.StatusOK {
				t.Fatalf("login: %d %s", res.Status, res.Body)
			}
			if secure := strings.Contains(res.Header.Get("Set-Cookie"), "; Secure"); secure != tt.trusted {
				t.Fatalf("cookie %q: Secure = %v, want %v", res.Header.Get("Set-Cookie"), secure, tt.trusted)
			}
			res = env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/echo/x", nil, fwd...)
			var e handlertest.Echoed
			res.JSON(t, &e)
			u, _ := url.Parse(env.Srv.URL)
			want := map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": u.Host, "X-Forwarded-Prefix": handlertest.GatewayPrefix}
			if tt.trusted {
				want = map[string]string{"X-Forwarded-For": "203.0.113.9, 127.0.0.1", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "portal.example", "X-Forwarded-Prefix": "/portal" + handlertest.GatewayPrefix}
			}
			for h, v := range want {
				if got := strings.Join(e.Headers[h], ","); got != v {
					t.Errorf("%s = %q, want %q", h, got, v)
				}
			}
		})
	}
}

// withAndWithoutCache runs fn with sessions read from the store on every
// request, and through the session cache (on an in-process bus), so that
// the relay's rules hold either way.
func withAndWithoutCache(t *testing.T, fn func(t *testing.T, o handlertest.GatewayOptions)) {
	t.Run("store", func(t *testing.T) { fn(t, handlertest.GatewayOptions{}) })
	t.Run("cached", func(t *testing.T) { fn(t, handlertest.GatewayOptions{Bus: (&sessiontest.MemHub{}).NewBus()}) })
	// As serve runs on SQLite: the cache on a LocalBus, where only this
	// process's own writes (logout, refresh) evict.
	t.Run("cached in process", func(t *testing.T) { fn(t, handlertest.GatewayOptions{Bus: session.NewLocalBus()}) })
}

// relaySessionsOn runs fn on every shared store available: the database
// stores (SQLite, PostgreSQL when configured) and Redis when configured.
// instance gives the options of one more gateway instance on that store:
// on PostgreSQL and Redis with the session cache, as deployed, on a bus
// all of the test's instances share.
func relaySessionsOn(t *testing.T, fn func(t *testing.T, db *bun.DB, instance func() handlertest.GatewayOptions)) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		fn(t, db, func() handlertest.GatewayOptions {
			o := handlertest.GatewayOptions{Store: session.NewDBStore(db, session.Encrypted(handlertest.GatewayKeyring))}
			if db.Dialect().Name() == dialect.PG {
				bus := session.NewPGBus(db, "") // where the sessions table's trigger announces writes
				t.Cleanup(func() { bus.Close() })
				o.Bus = bus
			}
			return o
		})
	})
	t.Run("redis", func(t *testing.T) {
		rdb := sessiontest.Redis(t)
		prefix := sessiontest.RedisPrefix(t, rdb)
		fn(t, dbtest.SQLite(t), func() handlertest.GatewayOptions {
			bus := session.NewRedisBus(rdb, prefix)
			t.Cleanup(func() { bus.Close() })
			return handlertest.GatewayOptions{Store: session.NewRedisStore(rdb, session.RedisPrefix(prefix), session.Encrypted(handlertest.GatewayKeyring)), Bus: bus}
		})
	})
}

// A backend's interim answers (100 Continue, 103 Early Hints) pass on to
// the client, and its final status and headers follow unchanged, over
// HTTP/1.1 and h2c; the access log and the metrics see the final status.
func TestRelayInterimResponses(t *testing.T) {
	logs := &handlertest.LogBuffer{}
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, LogTo: logs, MetricsToken: "metrics-token-0123"})
	clients := []struct {
		name       string
		c          *http.Client
		protoMajor int
	}{{"HTTP/1.1", env.NewClient(), 1}, {"h2c", env.NewH2CClient(), 2}}
	h1 := clients[0].c.Transport.(handlertest.ScanTransport).Next.(*http.Transport)
	h1.ExpectContinueTimeout = time.Second // as curl, which waits for 100 Continue before a body over 1 KiB
	for _, cl := range clients {
		t.Run(cl.name+": 100 Continue then 401", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.Srv.URL+handlertest.GatewayPrefix+"/interim/continue", strings.NewReader(strings.Repeat("x", 2048)))
			req.Header.Set("Expect", "100-continue")
			req.Header.Set("Content-Type", "text/plain")
			res, body := send(t, cl.c, req)
			if res.ProtoMajor != cl.protoMajor {
				t.Fatalf("answered over %s", res.Proto)
			}
			if res.StatusCode != http.StatusUnauthorized || string(body) != `{"error":"unauthorized"}` || res.Header.Get("WWW-Authenticate") != "Bearer" {
				t.Fatalf("%d %q (WWW-Authenticate %q), want the backend's 401", res.StatusCode, body, res.Header.Get("WWW-Authenticate"))
			}
			if res.Header.Get("X-Request-Id") == "" {
				t.Fatal("the answer lost its X-Request-Id")
			}
		})
		t.Run(cl.name+": 103 Early Hints then 302", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, env.Srv.URL+handlertest.GatewayPrefix+"/interim/hints", nil)
			var hints []string
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
					if code == http.StatusEarlyHints {
						hints = append(hints, h.Get("Link"))
						if h.Get("Set-Cookie") != "" || h.Get("X-Backend-Note") != "" {
							t.Errorf("the early hints carried more than Link: %v", h)
						}
					}
					return nil
				}}))
			res, body := send(t, cl.c, req)
			if res.StatusCode != http.StatusFound || res.Header.Get("Location") != handlertest.GatewayPrefix+"/elsewhere" || string(body) != "moved" {
				t.Fatalf("%d Location %q %q, want the backend's 302", res.StatusCode, res.Header.Get("Location"), body)
			}
			if res.Header.Get("X-Request-Id") == "" {
				t.Fatal("the answer lost its X-Request-Id")
			}
			if len(hints) != 1 || !strings.Contains(hints[0], "/static/app.css") {
				t.Fatalf("early hints %q, want the backend's Link", hints)
			}
			if res.Header.Get("Link") != "" {
				t.Fatalf("the hint's Link %q stayed on the final answer", res.Header.Get("Link"))
			}
		})
	}
	waitFor(t, "access log lines with the final statuses", func() bool {
		l := logs.String()
		return strings.Count(l, "path="+handlertest.GatewayPrefix+"/interim/continue status=401") == 2 && strings.Count(l, "path="+handlertest.GatewayPrefix+"/interim/hints status=302") == 2
	})
	if l := logs.String(); strings.Contains(l, "status=100") || strings.Contains(l, "status=103") {
		t.Fatalf("the access log records an interim status:\n%s", l)
	}
	waitFor(t, "metrics with the final statuses", func() bool {
		res := env.Request(env.NewClient(), http.MethodGet, server.MetricsPath, nil, "Authorization", "Bearer metrics-token-0123")
		m := string(res.Body)
		return strings.Contains(m, `portal_http_requests_total{method="POST",route="/services/admin-service/*",status="401"} 2`) &&
			strings.Contains(m, `portal_http_requests_total{method="GET",route="/services/admin-service/*",status="302"} 2`) &&
			strings.Contains(m, `portal_relay_duration_seconds_count{status_class="4xx"} 2`) &&
			strings.Contains(m, `portal_relay_duration_seconds_count{status_class="3xx"} 2`) &&
			!strings.Contains(m, `status_class="1xx"`)
	})
}

// send does req with c and reads the whole answer.
func send(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// Relayed HTML, SVG and XML run sandboxed in an opaque origin, so their
// scripts cannot use the member's session; nothing relayed is sniffed.
func TestRelayActiveContent(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, TrustedPaths: []string{"/content/swagger-ui"}})
	c := env.NewClient()
	env.HashLogin(c, "demo")
	tests := []struct {
		name, path, ctype, backendCSP string
		sandboxed                     bool
	}{
		{"HTML", "/content/page", "text/html; charset=utf-8", "", true},
		{"XHTML", "/content/page", "application/xhtml+xml", "", true},
		{"SVG", "/content/logo.svg", "image/svg+xml", "", true},
		{"XML", "/content/feed", "application/xml", "", true},
		{"text XML", "/content/feed", "text/xml", "", true},
		{"an XML dialect", "/content/feed", "application/atom+xml", "", true},
		{"upper-case type", "/content/page", "TEXT/HTML", "", true},
		{"no Content-Type", "/content/page", "none", "", true},
		{"unparsable Content-Type", "/content/page", "html", "", true},
		{"JSON", "/content/data", "application/json", "", false},
		{"plain text", "/content/notes", "text/plain; charset=utf-8", "", false},
		{"PNG", "/content/logo.png", "image/png", "", false},
		{"HTML with the backend's own CSP", "/content/page", "text/html", "default-src 'self'; script-src 'unsafe-inline'", true},
		{"HTML on a trusted path", "/content/swagger-ui/index.html", "text/html", "", false},
		{"HTML at a trusted path itself", "/content/swagger-ui", "text/html", "", false},
		{"HTML beside a trusted path", "/content/swagger-uix/index.html", "text/html", "", true},
		{"HTML behind an encoded slash", "/content/swagger-ui%2Findex.html", "text/html", "", true},
		{"two Content-Types, the last HTML", "/content/page", "text/plain\ntext/html", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{"type": {tt.ctype}}
			if tt.backendCSP != "" {
				q.Set("csp", tt.backendCSP)
			}
			res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+tt.path+"?"+q.Encode(), nil)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d", res.Status)
			}
			if got := res.Header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want one nosniff", got)
			}
			csp := res.Header.Values("Content-Security-Policy")
			var sandbox []string
			for _, p := range csp {
				if strings.HasPrefix(p, "sandbox") {
					sandbox = append(sandbox, p)
				}
			}
			if tt.sandboxed != (len(sandbox) == 1) || len(sandbox) > 1 {
				t.Fatalf("Content-Security-Policy %q, want a sandbox: %v", csp, tt.sandboxed)
			}
			if tt.sandboxed && (!strings.Contains(sandbox[0], "allow-scripts") || strings.Contains(sandbox[0], "allow-same-origin")) {
				t.Errorf("sandbox %q must let scripts run, but never in the portal's origin", sandbox[0])
			}
			if tt.backendCSP != "" && !slices.Contains(csp, tt.backendCSP) {
				t.Errorf("Content-Security-Policy %q lost the backend's own", csp)
			}
			if tt.backendCSP == "" && len(csp) != len(sandbox) {
				t.Errorf("Content-Security-Policy %q: the gateway's page policy is not the relay's", csp)
			}
		})
	}
	t.Run("the gateway's own answers keep nosniff", func(t *testing.T) {
		res := env.Request(c, http.MethodGet, handlertest.GatewayPrefix+"/slow/%2e%2e/x", nil)
		if res.Status != http.StatusBadRequest || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%d with X-Content-Type-Options %q", res.Status, res.Header.Get("X-Content-Type-Options"))
		}
	})
}

// The backend sets only the cookies an operator allowed, never the
// gateway's own.
func TestRelayCookieAllowList(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, AllowedCookies: []string{"backend_pref", "JSESSIONID"}})
	res := env.Request(env.NewClient(), http.MethodGet, handlertest.GatewayPrefix+"/set-cookie", nil)
	sc := strings.Join(res.Header.Values("Set-Cookie"), "\n")
	if !strings.Contains(sc, "backend_pref=dark") {
		t.Errorf("Set-Cookie %q lacks the allowed backend_pref", sc)
	}
	if strings.Contains(sc, "tracker") {
		t.Errorf("Set-Cookie %q carries a cookie nobody allowed", sc)
	}
	if strings.Contains(sc, "planted-by-backend") {
		t.Errorf("Set-Cookie %q sets the session cookie, listed or not", sc)
	}
	none := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true})
	if res := none.Request(none.NewClient(), http.MethodGet, handlertest.GatewayPrefix+"/set-cookie", nil); len(res.Header.Values("Set-Cookie")) != 0 {
		t.Errorf("Set-Cookie %q without an allow-list", res.Header.Values("Set-Cookie"))
	}
}

// Segments that a Java backend (Tomcat, Jetty) reads as "." or "..", after
// path parameters, one or two rounds of percent-decoding or with
// backslashes, are refused and never reach the backend; ordinary paths
// still pass as before.
func TestRelayRefusesDotSegments(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true})
	c := env.NewClient()
	for _, target := range []string{
		"/..;/actuator/env",
		"/echo/..;/..;/actuator/env",
		"/echo/..;jsessionid=x/admin",
		"/echo/.;/admin",
		"/echo/%2e%2e/admin",
		"/echo/%2E%2E;x/admin",
		"/echo/%252e%252e/admin",
		"/echo/%25%32%65%25%32%65/admin",
		"/echo/.%2e/admin",
		"/echo/%2e/admin",
		"/echo/..%2fadmin",
		`/echo/..\admin`,
		`/echo\..\admin`,
		"/echo/..%5cadmin",
		"/echo/..%5Cadmin",
		"/echo/..%255cadmin",
		"/echo/%2e%2e%3bx/admin",
		"/..",
		"/echo/%252e%252e/%25zz/admin", // an invalid escape elsewhere must not end the check
		"/echo/%25252e%25252e/admin",   // encoded three times
		"/echo/%25252e%25252e/%25zz/y", // both
	} {
		t.Run(target, func(t *testing.T) {
			before := env.Backend.Requests.Load()
			res := env.RawRequest(c, http.MethodGet, handlertest.GatewayPrefix+target)
			if res.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", res.Status, res.Body)
			}
			var e handlertest.HTTPError
			res.JSON(t, &e)
			if e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "segments") {
				t.Fatalf("error body %s", res.Body)
			}
			if n := env.Backend.Requests.Load(); n != before {
				t.Fatalf("the backend received it (%d requests)", n-before)
			}
		})
	}
	for _, tt := range []struct{ target, path, rawPath string }{
		{"/echo/x;jsessionid=abc", "/echo/x;jsessionid=abc", "/echo/x;jsessionid=abc"},
		{"/echo/a%2Fb", "/echo/a/b", "/echo/a%2Fb"},
		{"/echo/..x/y..", "/echo/..x/y..", "/echo/..x/y.."},
		{"/echo/x..;y", "/echo/x..;y", "/echo/x..;y"},
		{"/echo/100%25", "/echo/100%", "/echo/100%25"},
		{"/echo/.well-known/x", "/echo/.well-known/x", "/echo/.well-known/x"},
	} {
		t.Run("passes "+tt.target, func(t *testing.T) {
			res := env.RawRequest(c, http.MethodGet, handlertest.GatewayPrefix+tt.target)
			var e handlertest.Echoed
			res.JSON(t, &e)
			if res.Status != http.StatusOK || e.Path != tt.path || e.RawPath != tt.rawPath {
				t.Fatalf("%d, backend got %q (%q), want %q (%q)", res.Status, e.Path, e.RawPath, tt.path, tt.rawPath)
			}
		})
	}
}

// Without a trusted proxy in front, the backend learns the portal's public
// address from the configuration, never from the client's Host.
func TestRelayForwardsPublicAddress(t *testing.T) {
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, PublicURL: "https://portal.example"})
	req, _ := http.NewRequest(http.MethodGet, env.Srv.URL+handlertest.GatewayPrefix+"/echo/x", nil)
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil.example")
	// Other forwarding headers backends believe (Spring's ForwardedHeaderFilter):
	// from a client with no trusted proxy in front, they must not arrive.
	for _, h := range []string{"X-Forwarded-Port", "X-Forwarded-Ssl", "X-Forwarded-Server", "X-Real-Ip", "X-Forwarded-Prefix"} {
		req.Header.Set(h, "8443")
	}
	res, body := send(t, env.NewClient(), req)
	var e handlertest.Echoed
	handlertest.Response{Status: res.StatusCode, Header: res.Header, Body: body}.JSON(t, &e)
	want := map[string]string{"X-Forwarded-Host": "portal.example", "X-Forwarded-Proto": "https", "X-Forwarded-Prefix": handlertest.GatewayPrefix,
		"X-Forwarded-Port": "", "X-Forwarded-Ssl": "", "X-Forwarded-Server": "", "X-Real-Ip": ""}
	for h, v := range want {
		if got := strings.Join(e.Headers[h], ","); got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
}
