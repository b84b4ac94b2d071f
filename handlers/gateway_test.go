package handlers_test

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
	"portal/handlers/server"
	"portal/relay/hashlink"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestRelayWithoutBackend(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noBackend: true})
	for _, accept := range []string{"application/json", "text/html"} {
		res := env.request(env.client, http.MethodPost, gwPrefix+"/api/events", strings.NewReader(`{}`), "Accept", accept, "Content-Type", "application/json")
		e := expectHTTPError(t, res, http.StatusServiceUnavailable, gwPrefix+"/api/events")
		if !strings.Contains(e.Message, "not configured") {
			t.Errorf("message %q does not say the backend is not configured", e.Message)
		}
	}
	if res := env.request(env.client, http.MethodGet, server.LoginPath, nil); res.status != http.StatusNotFound {
		t.Errorf("GET /login without OIDC: %d, want 404", res.status)
	}
	// The hash login works as before, without a backend call.
	if res := env.hashLogin(env.client, "demo"); res.status != http.StatusOK {
		t.Fatalf("hash login without a backend: %d %s", res.status, res.body)
	}
	if s := env.storedSession(env.client); s == nil || s.Values[session.AttrBackendJWT] != "" {
		t.Fatalf("session %+v, want one without a backend JWT", s)
	}
	if n := env.backend.logins.Load(); n != 0 {
		t.Fatalf("backend logins = %d without a backend configured", n)
	}
}

func TestHashLoginCallsBackend(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true})
	t.Run("backend accepts: JWT stored without expiry and relayed", func(t *testing.T) {
		c := env.newClient()
		if res := env.hashLogin(c, "demo"); res.status != http.StatusOK || len(res.body) != 0 {
			t.Fatalf("login: %d %q, want 200 and an empty body", res.status, res.body)
		}
		s := env.storedSession(c)
		if s == nil || s.UserKey != "demo" || s.Values[session.AttrBackendJWT] != env.backend.lastIssued() {
			t.Fatalf("session %+v does not hold the backend's JWT", s)
		}
		if _, ok := s.Values[session.AttrBackendJWTExpiry]; ok {
			t.Fatalf("a hash login set %s", session.AttrBackendJWTExpiry)
		}
		_, e := env.relayEcho(c)
		if e.Authorization != "Bearer "+digest(s.Values[session.AttrBackendJWT]) {
			t.Fatalf("backend got Authorization %q, want the session's JWT", e.Authorization)
		}
	})
	for _, tc := range []struct {
		mode   string
		status int
	}{{"reject", http.StatusUnauthorized}, {"fail", http.StatusBadGateway}} {
		t.Run("backend "+tc.mode, func(t *testing.T) {
			env.backend.loginMode.Store(tc.mode)
			defer env.backend.loginMode.Store("")
			c := env.newClient()
			res := env.hashLogin(c, "demo")
			expectHTTPError(t, res, tc.status, "/api/auth/external-login")
			if res.header.Get("Set-Cookie") != "" || env.sessionID(c) != "" {
				t.Fatal("a failed login set a session cookie")
			}
		})
	}
	t.Run("backend down", func(t *testing.T) {
		down := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true})
		down.backend.srv.Close()
		c := down.newClient()
		res := down.hashLogin(c, "demo")
		expectHTTPError(t, res, http.StatusBadGateway, "/api/auth/external-login")
		if down.sessionID(c) != "" {
			t.Fatal("a failed login set a session cookie")
		}
	})
	t.Run("wrong hash never reaches the backend", func(t *testing.T) {
		before := env.backend.logins.Load()
		res := env.request(env.newClient(), http.MethodPost, "/api/auth/external-login",
			strings.NewReader(`{"userKey":"demo","hash":"00000000000000000000000000000000"}`), "Content-Type", "application/json")
		expectHTTPError(t, res, http.StatusUnauthorized, "/api/auth/external-login")
		if env.backend.logins.Load() != before {
			t.Fatal("the backend was asked about a login whose hash is wrong")
		}
	})
}

// One test per row of the spec's relay filter table.
func TestRelayFilterTable(t *testing.T) {
	withAndWithoutCache(t, testRelayFilterTable)
}

func testRelayFilterTable(t *testing.T, o gwOptions) {
	env := newGateway(t, dbtest.SQLite(t), o)

	t.Run("guest: no Authorization, inbound one dropped", func(t *testing.T) {
		res, e := env.relayEcho(env.newClient(), "Authorization", "Bearer forged-by-the-client")
		if res.status != http.StatusOK || e.Authorization != "" {
			t.Fatalf("%d, backend got Authorization %q; want none", res.status, e.Authorization)
		}
	})

	t.Run("hash login without expiry: token relayed as it is, replacing the inbound one", func(t *testing.T) {
		c := env.newClient()
		env.hashLogin(c, "demo")
		jwt := env.storedSession(c).Values[session.AttrBackendJWT]
		_, e := env.relayEcho(c, "Authorization", "Bearer forged-by-the-client")
		if e.Authorization != "Bearer "+digest(jwt) {
			t.Fatalf("backend got %q, want the session's JWT", e.Authorization)
		}
	})

	t.Run("non-OIDC token past its exp: session cleared, passed through without Authorization", func(t *testing.T) {
		env.backend.loginTTL.Store(int64(-time.Minute)) // the backend hands out an expired token
		defer env.backend.loginTTL.Store(0)
		c := env.newClient()
		env.hashLogin(c, "demo")
		id := env.sessionID(c)
		res, e := env.relayEcho(c)
		if res.status != http.StatusOK || e.Authorization != "" {
			t.Fatalf("%d, backend got Authorization %q; want the request passed on without", res.status, e.Authorization)
		}
		if !strings.Contains(res.header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("Set-Cookie %q does not clear the session cookie", res.header.Get("Set-Cookie"))
		}
		if _, err := env.store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("the session is still in the store: %v", err)
		}
	})

	t.Run("OIDC token valid beyond now+30s: relayed, no refresh", func(t *testing.T) {
		env.backend.exchangeTTL.Store(int64(31 * time.Second)) // just outside the window
		defer env.backend.exchangeTTL.Store(int64(5 * time.Minute))
		c := env.newClient()
		env.mustOIDCLogin(c, "/")
		jwt := env.storedSession(c).Values[session.AttrBackendJWT]
		refreshes := env.idp.refreshes.Load()
		_, e := env.relayEcho(c)
		if e.Authorization != "Bearer "+digest(jwt) {
			t.Fatalf("backend got %q, want the session's JWT", e.Authorization)
		}
		if env.idp.refreshes.Load() != refreshes {
			t.Fatal("a token valid for 31 s was refreshed")
		}
	})

	t.Run("OIDC token expiring: refreshed, exchanged, stored and relayed", func(t *testing.T) {
		env.backend.exchangeTTL.Store(int64(29 * time.Second)) // inside the 30 s window
		c := env.newClient()
		env.mustOIDCLogin(c, "/")
		old := env.storedSession(c)
		env.backend.exchangeTTL.Store(int64(5 * time.Minute))
		refreshes, exchanges := env.idp.refreshes.Load(), env.backend.exchanges.Load()
		_, e := env.relayEcho(c)
		if env.idp.refreshes.Load() != refreshes+1 || env.backend.exchanges.Load() != exchanges+1 {
			t.Fatalf("refreshes +%d, exchanges +%d; want one each", env.idp.refreshes.Load()-refreshes, env.backend.exchanges.Load()-exchanges)
		}
		now := env.storedSession(c)
		if now.ID != old.ID || now.Values[session.AttrBackendJWT] == old.Values[session.AttrBackendJWT] {
			t.Fatal("the session does not hold a new JWT")
		}
		if e.Authorization != "Bearer "+digest(now.Values[session.AttrBackendJWT]) {
			t.Fatalf("backend got %q, want the new JWT", e.Authorization)
		}
		if exp, _ := oidc.Expiry(now); time.Until(exp) < 4*time.Minute {
			t.Fatalf("stored expiry %v is not the new token's", exp)
		}
		if _, e := env.relayEcho(c); e.Authorization != "Bearer "+digest(now.Values[session.AttrBackendJWT]) || env.idp.refreshes.Load() != refreshes+1 {
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
				env.backend.exchangeTTL.Store(int64(10 * time.Second))
				c := env.newClient()
				env.mustOIDCLogin(c, "/")
				env.backend.exchangeTTL.Store(int64(5 * time.Minute))
				env.idp.refreshMode.Store("invalid_grant")
				defer env.idp.refreshMode.Store("")
				id := env.sessionID(c)
				res := env.request(c, tc.method, gwPrefix+"/echo/page?x=1", strings.NewReader(`{}`), tc.headers...)
				if tc.nav {
					if res.status != http.StatusSeeOther || res.header.Get("Location") != "/login?rd="+url.QueryEscape(gwPrefix+"/echo/page?x=1") {
						t.Fatalf("%d to %q, want 303 to the login returning here", res.status, res.header.Get("Location"))
					}
				} else {
					var body gateway.LoginRequiredBody
					res.json(t, &body)
					if res.status != http.StatusUnauthorized || body.Status != 401 || body.LoginURL == "" || !strings.HasPrefix(body.LoginURL, "/login") || body.Path != gwPrefix+"/echo/page" {
						t.Fatalf("%d %s, want 401 with a loginUrl", res.status, res.body)
					}
				}
				if _, err := env.store.Load(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
					t.Fatalf("after invalid_grant the session is still in the store: %v", err)
				}
				if !strings.Contains(res.header.Get("Set-Cookie"), "Max-Age=0") {
					t.Errorf("the session cookie was not cleared: %q", res.header.Get("Set-Cookie"))
				}
			})
		}
	})

	t.Run("OIDC refresh network error: session kept; old token while valid, then 503, then recovery", func(t *testing.T) {
		env.backend.exchangeTTL.Store(int64(20 * time.Second))
		c := env.newClient()
		env.mustOIDCLogin(c, "/")
		old := env.storedSession(c).Values[session.AttrBackendJWT]
		env.idp.refreshMode.Store("down")
		defer env.idp.refreshMode.Store("")
		res, e := env.relayEcho(c)
		if res.status != http.StatusOK || e.Authorization != "Bearer "+digest(old) {
			t.Fatalf("%d %q, want the old, still valid token relayed", res.status, e.Authorization)
		}
		// Now the token has expired as well: 503, and the session stays.
		// (Written through the Manager, as any instance would, so that a
		// session cache hears of it.)
		s := env.storedSession(c)
		s.Values[session.AttrBackendJWTExpiry] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
		if err := env.sessions.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		res, _ = env.relayEcho(c)
		expectHTTPError(t, res, http.StatusServiceUnavailable, gwPrefix+"/echo/x")
		if env.storedSession(c) == nil {
			t.Fatal("a network error ended the session")
		}
		env.idp.refreshMode.Store("")
		env.backend.exchangeTTL.Store(int64(5 * time.Minute))
		res, e = env.relayEcho(c)
		if res.status != http.StatusOK || e.Authorization != "Bearer "+digest(env.storedSession(c).Values[session.AttrBackendJWT]) || e.Authorization == "Bearer "+digest(old) {
			t.Fatalf("%d %q, want a fresh token without a new login", res.status, e.Authorization)
		}
	})
}

func TestRelayForwarding(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{responseTTO: time.Second, maxBody: 1024})
	c := env.newClient()
	env.hashLogin(c, "demo")

	t.Run("method, path without prefix, query, body, forwarded headers", func(t *testing.T) {
		res := env.request(c, http.MethodPut, gwPrefix+"/echo/api/events/7?a=1&b=x%20y", strings.NewReader(`{"name":"regatta"}`),
			"Content-Type", "application/json", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example", "X-Api-Key", "guessed")
		var e echoed
		res.json(t, &e)
		u, _ := url.Parse(env.srv.URL)
		want := map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": u.Host, "X-Forwarded-Prefix": gwPrefix}
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
		u, _ := url.Parse(env.srv.URL)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "theme", Value: "dark"}, {Name: "portal_login_0123456789abcdef", Value: "x"}})
		_, e := env.relayEcho(c)
		cookies := strings.Join(e.Headers["Cookie"], ";")
		if strings.Contains(cookies, "JSESSIONID") || strings.Contains(cookies, "portal_login_") || !strings.Contains(cookies, "theme=dark") {
			t.Fatalf("backend got Cookie %q", cookies)
		}
	})

	t.Run("api-docs servers reflect X-Forwarded-Prefix", func(t *testing.T) {
		res := env.request(c, http.MethodGet, gwPrefix+"/v3/api-docs", nil)
		var doc struct{ Servers []struct{ URL string } }
		res.json(t, &doc)
		if len(doc.Servers) != 1 || doc.Servers[0].URL != env.srv.URL+gwPrefix {
			t.Fatalf("servers %+v, want %s", doc.Servers, env.srv.URL+gwPrefix)
		}
	})

	t.Run("responses stream", func(t *testing.T) {
		res := env.request(c, http.MethodGet, gwPrefix+"/stream", nil)
		if res.status != http.StatusOK || string(res.body) != "data: 0\n\ndata: 1\n\ndata: 2\n\n" || res.header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %q", res.status, res.body)
		}
	})

	t.Run("body over the limit: 413", func(t *testing.T) {
		big := strings.Repeat("x", 1025)
		res := env.request(c, http.MethodPost, gwPrefix+"/echo/upload", strings.NewReader(big), "Content-Type", "text/plain")
		expectHTTPError(t, res, http.StatusRequestEntityTooLarge, gwPrefix+"/echo/upload")
		// Chunked, so no Content-Length tells in advance.
		res = env.request(c, http.MethodPost, gwPrefix+"/echo/upload", struct{ *strings.Reader }{strings.NewReader(big)}, "Content-Type", "text/plain")
		expectHTTPError(t, res, http.StatusRequestEntityTooLarge, gwPrefix+"/echo/upload")
		res = env.request(c, http.MethodPost, gwPrefix+"/echo/upload", strings.NewReader(big[:1024]), "Content-Type", "text/plain")
		if res.status != http.StatusOK {
			t.Fatalf("a body of exactly the limit: %d", res.status)
		}
	})

	t.Run("slow backend: 504", func(t *testing.T) {
		res := env.request(c, http.MethodGet, gwPrefix+"/slow", nil)
		expectHTTPError(t, res, http.StatusGatewayTimeout, gwPrefix+"/slow")
	})

	t.Run("dot segments: 400", func(t *testing.T) {
		res := env.request(c, http.MethodGet, gwPrefix+"/echo/%2e%2e/admin", nil)
		expectHTTPError(t, res, http.StatusBadRequest, gwPrefix+"/echo/../admin")
	})

	t.Run("backend down: 502, and the gateway stays up", func(t *testing.T) {
		down := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true})
		dc := down.newClient()
		down.hashLogin(dc, "demo")
		down.backend.srv.Close()
		res := down.request(dc, http.MethodGet, gwPrefix+"/echo/x", nil, "Accept", "text/html")
		expectHTTPError(t, res, http.StatusBadGateway, gwPrefix+"/echo/x")
		if res := down.request(dc, http.MethodGet, "/healthz", nil); res.status != http.StatusOK {
			t.Fatalf("healthz after a relay failure: %d", res.status)
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
			env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true, trustedProxies: tt.proxies})
			c := env.newClient()
			fwd := []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "203.0.113.9", "X-Forwarded-Host", "portal.example", "X-Forwarded-Prefix", "/portal"}
			body := `{"userKey":"demo","hash":"` + hashlink.Sign(testSecret, "demo") + `"}`
			res := env.request(c, http.MethodPost, "/api/auth/external-login", strings.NewReader(body), append([]string{"Content-Type", "application/json"}, fwd...)...)
			if res.status != http.StatusOK {
				t.Fatalf("login: %d %s", res.status, res.body)
			}
			if secure := strings.Contains(res.header.Get("Set-Cookie"), "; Secure"); secure != tt.trusted {
				t.Fatalf("cookie %q: Secure = %v, want %v", res.header.Get("Set-Cookie"), secure, tt.trusted)
			}
			res = env.request(c, http.MethodGet, gwPrefix+"/echo/x", nil, fwd...)
			var e echoed
			res.json(t, &e)
			u, _ := url.Parse(env.srv.URL)
			want := map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": u.Host, "X-Forwarded-Prefix": gwPrefix}
			if tt.trusted {
				want = map[string]string{"X-Forwarded-For": "203.0.113.9, 127.0.0.1", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "portal.example", "X-Forwarded-Prefix": "/portal" + gwPrefix}
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
func withAndWithoutCache(t *testing.T, fn func(t *testing.T, o gwOptions)) {
	t.Run("store", func(t *testing.T) { fn(t, gwOptions{}) })
	t.Run("cached", func(t *testing.T) { fn(t, gwOptions{bus: (&sessiontest.MemHub{}).NewBus()}) })
	// As serve runs on SQLite: the cache on a LocalBus, where only this
	// process's own writes (logout, refresh) evict.
	t.Run("cached in process", func(t *testing.T) { fn(t, gwOptions{bus: session.NewLocalBus()}) })
}

// relaySessionsOn runs fn on every shared store available: the database
// stores (SQLite, PostgreSQL when configured) and Redis when configured.
// instance gives the options of one more gateway instance on that store:
// on PostgreSQL and Redis with the session cache, as deployed, on a bus
// all of the test's instances share.
func relaySessionsOn(t *testing.T, fn func(t *testing.T, db *bun.DB, instance func() gwOptions)) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		fn(t, db, func() gwOptions {
			o := gwOptions{store: session.NewDBStore(db, session.Encrypted(gwKeyring))}
			if db.Dialect().Name() == dialect.PG {
				bus := session.NewPGBus(db, "") // where the sessions table's trigger announces writes
				t.Cleanup(func() { bus.Close() })
				o.bus = bus
			}
			return o
		})
	})
	t.Run("redis", func(t *testing.T) {
		rdb := sessiontest.Redis(t)
		prefix := sessiontest.RedisPrefix(t, rdb)
		fn(t, dbtest.SQLite(t), func() gwOptions {
			bus := session.NewRedisBus(rdb, prefix)
			t.Cleanup(func() { bus.Close() })
			return gwOptions{store: session.NewRedisStore(rdb, session.RedisPrefix(prefix), session.Encrypted(gwKeyring)), bus: bus}
		})
	})
}

// A backend's interim answers (100 Continue, 103 Early Hints) pass on to
// the client, and its final status and headers follow unchanged, over
// HTTP/1.1 and h2c; the access log and the metrics see the final status.
func TestRelayInterimResponses(t *testing.T) {
	logs := &logBuffer{}
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true, logTo: logs, metricsToken: "metrics-token-0123"})
	clients := []struct {
		name       string
		c          *http.Client
		protoMajor int
	}{{"HTTP/1.1", env.newClient(), 1}, {"h2c", env.newH2CClient(), 2}}
	h1 := clients[0].c.Transport.(scanTransport).next.(*http.Transport)
	h1.ExpectContinueTimeout = time.Second // as curl, which waits for 100 Continue before a body over 1 KiB
	for _, cl := range clients {
		t.Run(cl.name+": 100 Continue then 401", func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.srv.URL+gwPrefix+"/interim/continue", strings.NewReader(strings.Repeat("x", 2048)))
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
			req, _ := http.NewRequest(http.MethodGet, env.srv.URL+gwPrefix+"/interim/hints", nil)
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
			if res.StatusCode != http.StatusFound || res.Header.Get("Location") != gwPrefix+"/elsewhere" || string(body) != "moved" {
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
		return strings.Count(l, "path="+gwPrefix+"/interim/continue status=401") == 2 && strings.Count(l, "path="+gwPrefix+"/interim/hints status=302") == 2
	})
	if l := logs.String(); strings.Contains(l, "status=100") || strings.Contains(l, "status=103") {
		t.Fatalf("the access log records an interim status:\n%s", l)
	}
	waitFor(t, "metrics with the final statuses", func() bool {
		res := env.request(env.newClient(), http.MethodGet, server.MetricsPath, nil, "Authorization", "Bearer metrics-token-0123")
		m := string(res.body)
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
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true, trustedPaths: []string{"/content/swagger-ui"}})
	c := env.newClient()
	env.hashLogin(c, "demo")
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
			res := env.request(c, http.MethodGet, gwPrefix+tt.path+"?"+q.Encode(), nil)
			if res.status != http.StatusOK {
				t.Fatalf("status %d", res.status)
			}
			if got := res.header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want one nosniff", got)
			}
			csp := res.header.Values("Content-Security-Policy")
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
		res := env.request(c, http.MethodGet, gwPrefix+"/slow/%2e%2e/x", nil)
		if res.status != http.StatusBadRequest || res.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%d with X-Content-Type-Options %q", res.status, res.header.Get("X-Content-Type-Options"))
		}
	})
}

// The backend sets only the cookies an operator allowed, never the
// gateway's own.
func TestRelayCookieAllowList(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true, allowedCookies: []string{"backend_pref", "JSESSIONID"}})
	res := env.request(env.newClient(), http.MethodGet, gwPrefix+"/set-cookie", nil)
	sc := strings.Join(res.header.Values("Set-Cookie"), "\n")
	if !strings.Contains(sc, "backend_pref=dark") {
		t.Errorf("Set-Cookie %q lacks the allowed backend_pref", sc)
	}
	if strings.Contains(sc, "tracker") {
		t.Errorf("Set-Cookie %q carries a cookie nobody allowed", sc)
	}
	if strings.Contains(sc, "planted-by-backend") {
		t.Errorf("Set-Cookie %q sets the session cookie, listed or not", sc)
	}
	none := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true})
	if res := none.request(none.newClient(), http.MethodGet, gwPrefix+"/set-cookie", nil); len(res.header.Values("Set-Cookie")) != 0 {
		t.Errorf("Set-Cookie %q without an allow-list", res.header.Values("Set-Cookie"))
	}
}

// Segments that a Java backend (Tomcat, Jetty) reads as "." or "..", after
// path parameters, one or two rounds of percent-decoding or with
// backslashes, are refused and never reach the backend; ordinary paths
// still pass as before.
func TestRelayRefusesDotSegments(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true})
	c := env.newClient()
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
			before := env.backend.requests.Load()
			res := env.rawRequest(c, http.MethodGet, gwPrefix+target)
			if res.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", res.status, res.body)
			}
			var e httpError
			res.json(t, &e)
			if e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "segments") {
				t.Fatalf("error body %s", res.body)
			}
			if n := env.backend.requests.Load(); n != before {
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
			res := env.rawRequest(c, http.MethodGet, gwPrefix+tt.target)
			var e echoed
			res.json(t, &e)
			if res.status != http.StatusOK || e.Path != tt.path || e.RawPath != tt.rawPath {
				t.Fatalf("%d, backend got %q (%q), want %q (%q)", res.status, e.Path, e.RawPath, tt.path, tt.rawPath)
			}
		})
	}
}

// Without a trusted proxy in front, the backend learns the portal's public
// address from the configuration, never from the client's Host.
func TestRelayForwardsPublicAddress(t *testing.T) {
	env := newGateway(t, dbtest.SQLite(t), gwOptions{noOIDC: true, publicURL: "https://portal.example"})
	req, _ := http.NewRequest(http.MethodGet, env.srv.URL+gwPrefix+"/echo/x", nil)
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil.example")
	// Other forwarding headers backends believe (Spring's ForwardedHeaderFilter):
	// from a client with no trusted proxy in front, they must not arrive.
	for _, h := range []string{"X-Forwarded-Port", "X-Forwarded-Ssl", "X-Forwarded-Server", "X-Real-Ip", "X-Forwarded-Prefix"} {
		req.Header.Set(h, "8443")
	}
	res, body := send(t, env.newClient(), req)
	var e echoed
	response{status: res.StatusCode, header: res.Header, body: body}.json(t, &e)
	want := map[string]string{"X-Forwarded-Host": "portal.example", "X-Forwarded-Proto": "https", "X-Forwarded-Prefix": gwPrefix,
		"X-Forwarded-Port": "", "X-Forwarded-Ssl": "", "X-Forwarded-Server": "", "X-Real-Ip": ""}
	for h, v := range want {
		if got := strings.Join(e.Headers[h], ","); got != v {
			t.Errorf("%s = %q, want %q", h, got, v)
		}
	}
}
