package handlers_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/payment"
	"portal/handlers"
	"portal/handlers/server"
	"portal/relay/backend"
	"portal/relay/hashlink"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
	"portal/relay/upstream"
)

const (
	gwAPIKey         = "test-api-key-never-in-a-browser-0123"
	gwRegistrationID = "portal-test"
	gwPrefix         = "/services/admin-service"
)

// gwIdP is a real OIDC provider in the test process (mockoidc), with
// switches to make its token endpoint refuse or fail refreshes.
type gwIdP struct {
	m         *mockoidc.MockOIDC
	refreshes atomic.Int32 // refresh_token grants received
	codes     atomic.Int32 // authorization_code grants received
	// refreshMode: "" ok, "invalid_grant", "down" (connection dropped).
	refreshMode atomic.Value
	ended       atomic.Int32 // calls of the end-session endpoint
}

func newIdP(t *testing.T) *gwIdP {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.AccessTTL = 20 * time.Second // short-lived, as the exchange's tokens
	m.RefreshTTL = 10 * time.Minute
	idp := &gwIdP{m: m}
	idp.refreshMode.Store("")
	var mu sync.Mutex // mockoidc's session map is not safe for concurrent use
	m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			switch r.URL.Path {
			case mockoidc.DiscoveryEndpoint:
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				var doc map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
				doc["end_session_endpoint"] = m.Issuer() + "/logout"
				// mockoidc reads client credentials from the form only.
				doc["token_endpoint_auth_methods_supported"] = []string{"client_secret_post"}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(doc)
				return
			case mockoidc.IssuerBase + "/logout":
				idp.ended.Add(1)
				w.WriteHeader(http.StatusOK)
				return
			case mockoidc.TokenEndpoint:
				r.ParseForm()
				switch r.PostForm.Get("grant_type") {
				case "refresh_token":
					idp.refreshes.Add(1)
					switch idp.refreshMode.Load().(string) {
					case "invalid_grant":
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusBadRequest)
						io.WriteString(w, `{"error":"invalid_grant","error_description":"refresh token revoked"}`)
						return
					case "down":
						if hj, ok := w.(http.Hijacker); ok {
							if conn, _, err := hj.Hijack(); err == nil {
								conn.Close()
								return
							}
						}
						http.Error(w, "down", http.StatusServiceUnavailable)
						return
					}
				case "authorization_code":
					idp.codes.Add(1)
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return idp
}

// gwBackend is a test admin backend: token exchange (verifying the IdP's
// ID token like the real one), external login, an endpoint echoing what it
// received, a slow one, a streaming one, interim (1xx) answers, content of
// any type and /v3/api-docs.
type gwBackend struct {
	t         *testing.T
	srv       *httptest.Server
	requests  atomic.Int32 // every request received, whatever its path
	verifier  *gooidc.IDTokenVerifier
	exchanges atomic.Int32
	logins    atomic.Int32
	// exchangeTTL is the lifetime of exchanged JWTs; loginTTL that of hash
	// login JWTs (0: no exp claim).
	exchangeTTL, loginTTL atomic.Int64
	// exchangeMode / loginMode: "" ok, "reject" (401), "fail" (500).
	exchangeMode, loginMode atomic.Value
	mu                      sync.Mutex
	issued                  []string // every JWT handed out, for the leak scan
}

// echoed is what /echo reports about the request it received. The bearer
// token is reported as a digest, so the echo itself never leaks it.
type echoed struct {
	Method        string              `json:"method"`
	Path          string              `json:"path"`
	RawPath       string              `json:"rawPath"` // the path as escaped on the wire
	RawQuery      string              `json:"rawQuery"`
	Body          string              `json:"body"`
	Authorization string              `json:"authorization"` // "" or "Bearer sha256:<hex>"
	Headers       map[string][]string `json:"headers"`
}

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func newBackend(t *testing.T, idp *gwIdP) *gwBackend {
	t.Helper()
	b := &gwBackend{t: t}
	b.exchangeTTL.Store(int64(5 * time.Minute))
	b.exchangeMode.Store("")
	b.loginMode.Store("")
	if idp != nil {
		keys := gooidc.NewRemoteKeySet(context.Background(), idp.m.JWKSEndpoint())
		b.verifier = gooidc.NewVerifier(idp.m.Issuer(), keys, &gooidc.Config{ClientID: idp.m.ClientID})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /auth/token-exchange", b.tokenExchange)
	mux.HandleFunc("POST /auth/external-login", b.externalLogin)
	mux.HandleFunc("/echo/", b.echo)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/set-cookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: "planted-by-backend", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "backend_pref", Value: "dark", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "tracker", Value: "unlisted", Path: "/"})
		w.WriteHeader(http.StatusNoContent)
	})
	// 100 Continue, then a refusal: what Spring Security answers a large
	// POST without a valid token.
	mux.HandleFunc("POST /interim/continue", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusContinue)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"unauthorized"}`)
	})
	mux.HandleFunc("GET /interim/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</static/app.css>; rel=preload; as=style")
		w.Header().Set("Set-Cookie", "JSESSIONID=planted-in-a-hint; Path=/")
		w.Header().Set("X-Backend-Note", "interim")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Del("Set-Cookie")
		w.Header().Del("X-Backend-Note")
		w.Header().Set("Location", "/services/admin-service/elsewhere")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, "moved")
	})
	// /content/** answers with the Content-Type ?type= names ("none": no
	// Content-Type at all) and the backend's own CSP from ?csp=.
	mux.HandleFunc("/content/", func(w http.ResponseWriter, r *http.Request) {
		switch ct := r.URL.Query().Get("type"); ct {
		case "none":
			w.Header()["Content-Type"] = nil // keeps net/http from sniffing one
		default: // several, one per line
			w.Header()["Content-Type"] = strings.Split(ct, "\n")
		}
		if csp := r.URL.Query().Get("csp"); csp != "" {
			w.Header().Set("Content-Security-Policy", csp)
		}
		io.WriteString(w, `<html><script>fetch("/api/forms/next",{method:"POST",credentials:"include"})</script></html>`)
	})
	mux.HandleFunc("GET /v3/api-docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"openapi": "3.0.1",
			"servers": []map[string]string{{"url": r.Header.Get("X-Forwarded-Proto") + "://" + r.Header.Get("X-Forwarded-Host") + r.Header.Get("X-Forwarded-Prefix")}},
			"paths":   map[string]any{}})
	})
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *gwBackend) url() *url.URL {
	u, _ := url.Parse(b.srv.URL)
	return u
}

// mint returns an HS256 JWT with exp = now+ttl (no exp when ttl is 0).
func (b *gwBackend) mint(sub string, ttl time.Duration) (string, time.Time) {
	now := time.Now()
	claims := map[string]any{"sub": sub, "iat": now.Unix(), "jti": hashlink.Sign("jti", fmt.Sprint(now.UnixNano())), "orgId": 1}
	var exp time.Time
	if ttl != 0 {
		exp = now.Add(ttl)
		claims["exp"] = exp.Unix()
	}
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	payload, _ := json.Marshal(claims)
	signing := header + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte("backend-signing-key"))
	mac.Write([]byte(signing))
	token := signing + "." + enc.EncodeToString(mac.Sum(nil))
	b.mu.Lock()
	b.issued = append(b.issued, token)
	b.mu.Unlock()
	return token, exp
}

func (b *gwBackend) issuedTokens() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.issued...)
}

func (b *gwBackend) tokenExchange(w http.ResponseWriter, r *http.Request) {
	b.exchanges.Add(1)
	if r.Header.Get("X-API-KEY") != gwAPIKey {
		http.Error(w, `{"error":"api key"}`, http.StatusUnauthorized)
		return
	}
	switch b.exchangeMode.Load().(string) {
	case "reject":
		http.Error(w, `{"error":"rejected"}`, http.StatusUnauthorized)
		return
	case "fail":
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		return
	}
	var req backend.ExchangeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.AccessToken == "" || req.IDToken == "" || req.ClientRegistrationID != gwRegistrationID {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	sub := "idp-user"
	if b.verifier != nil { // like the real backend: signature, issuer, audience
		idt, err := b.verifier.Verify(r.Context(), req.IDToken)
		if err != nil {
			b.t.Errorf("backend: the gateway sent an ID token that does not verify: %v", err)
			http.Error(w, `{"error":"bad id token"}`, http.StatusUnauthorized)
			return
		}
		sub = idt.Subject
	}
	token, exp := b.mint(sub, time.Duration(b.exchangeTTL.Load()))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"token": token, "expiresAt": exp.UTC().Format(time.RFC3339Nano)})
}

func (b *gwBackend) externalLogin(w http.ResponseWriter, r *http.Request) {
	b.logins.Add(1)
	if r.Header.Get("X-API-KEY") != gwAPIKey {
		http.Error(w, `{"error":"api key"}`, http.StatusUnauthorized)
		return
	}
	var req struct{ UserKey, Hash string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.UserKey == "" || req.Hash == "" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	switch b.loginMode.Load().(string) {
	case "reject":
		http.Error(w, `{"error":"unknown user"}`, http.StatusUnauthorized)
		return
	case "fail":
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		return
	}
	token, _ := b.mint("user:"+req.UserKey, time.Duration(b.loginTTL.Load()))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"token": token})
}

func (b *gwBackend) echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e := echoed{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: string(body), Headers: map[string][]string{}}
	for k, v := range r.Header {
		if k == "Authorization" {
			continue
		}
		e.Headers[k] = v
	}
	if a := r.Header.Get("Authorization"); a != "" {
		e.Authorization = "Bearer " + digest(strings.TrimPrefix(a, "Bearer "))
		if !strings.HasPrefix(a, "Bearer ") {
			e.Authorization = "non-bearer " + digest(a)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(e)
}

// gwOptions shape one gateway instance.
type gwOptions struct {
	store          session.Store // default: the database store on db, encrypted
	bus            session.Bus   // when set, sessions go through a cache on it (TTL a minute: only invalidations keep it right)
	noBackend      bool
	noOIDC         bool
	trustedProxies []netip.Prefix
	responseTTO    time.Duration
	maxBody        int64
	metricsToken   string
	publicURL      string    // PORTAL_BASE_URL; default: the test server's address
	trustedPaths   []string  // PORTAL_RELAY_TRUSTED_PATHS
	allowedCookies []string  // PORTAL_RELAY_ALLOWED_COOKIES
	logTo          io.Writer // the server's log; default: discarded
}

// gwEnv is a gateway instance with its IdP and backend, and a leak scan of
// every response its clients receive.
type gwEnv struct {
	t        *testing.T
	db       *bun.DB
	idp      *gwIdP
	backend  *gwBackend
	srv      *httptest.Server
	store    session.Store
	cache    *session.Cache // nil without gwOptions.bus
	sessions *session.Manager
	client   *http.Client
	scan     *leakScan
}

var gwKeyring = func() *session.Keyring {
	kr, err := session.ParseKeyring(session.GenerateKey())
	if err != nil {
		panic(err)
	}
	return kr
}()

// newGateway starts a gateway on db with a fresh IdP and backend.
func newGateway(t *testing.T, db *bun.DB, o gwOptions) *gwEnv {
	t.Helper()
	idp := newIdP(t)
	return newGatewayWith(t, db, idp, newBackend(t, idp), o)
}

// newGatewayWith starts a gateway instance on shared parts (for tests
// with two instances).
func newGatewayWith(t *testing.T, db *bun.DB, idp *gwIdP, be *gwBackend, o gwOptions) *gwEnv {
	t.Helper()
	env := &gwEnv{t: t, db: db, idp: idp, backend: be, scan: &leakScan{}}
	env.store = o.store
	if env.store == nil {
		env.store = session.NewDBStore(db, session.Encrypted(gwKeyring))
	}
	var handler http.Handler
	env.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	// As serve does: HTTP/1.1, and h2c for a proxy in front that speaks it.
	env.srv.Config.Protocols = new(http.Protocols)
	env.srv.Config.Protocols.SetHTTP1(true)
	env.srv.Config.Protocols.SetUnencryptedHTTP2(true)
	env.srv.Start()
	t.Cleanup(env.srv.Close)
	logTo := o.logTo
	if logTo == nil {
		logTo = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logTo, nil))
	metrics := server.NewMetrics()
	if o.bus != nil {
		env.cache = session.NewCache(o.bus, session.CacheConfig{TTL: time.Minute, PingEvery: 200 * time.Millisecond})
		sessiontest.StartCache(t, env.cache)
		metrics.WatchSessionCache(env.cache)
	}
	env.sessions = session.NewManager(env.store, session.Config{Secure: false, Cache: env.cache,
		SecureRequest: upstream.TrustedProxies(o.trustedProxies).HTTPS})
	publicURL := o.publicURL
	if publicURL == "" {
		publicURL = env.srv.URL
	}
	public, err := url.Parse(publicURL)
	if err != nil {
		t.Fatal(err)
	}
	relay := server.RelayDeps{BaseURL: env.srv.URL, Metrics: metrics, MetricsToken: o.metricsToken}
	if !o.noBackend {
		relay.Upstream = upstream.Config{Backend: be.url(), Prefix: gwPrefix, ResponseHeaderTimeout: o.responseTTO, MaxBodyBytes: o.maxBody,
			PublicURL: public, TrustedPaths: o.trustedPaths, AllowedCookies: o.allowedCookies}
		relay.Backend = backend.New(backend.Config{BaseURL: be.url(), APIKey: gwAPIKey})
		if !o.noOIDC {
			provider := oidc.NewProvider(oidc.ProviderConfig{Issuer: idp.m.Issuer(), ClientID: idp.m.ClientID, ClientSecret: idp.m.ClientSecret,
				Scopes: []string{"openid", "email", "profile"}, RedirectURL: env.srv.URL + server.CallbackPath})
			relay.OIDC = oidc.NewService(oidc.Config{Provider: provider, Backend: relay.Backend, Sessions: env.sessions,
				Attempts:       oidc.NewAttemptCookies(gwKeyring, server.CallbackPath, env.sessions.SecureFor),
				RegistrationID: gwRegistrationID, OnRefresh: metrics.ObserveRefresh, OnExchange: metrics.ObserveExchange})
		}
	}
	handler = handlers.New(handlers.Deps{
		Engine:         engine.NewService(db, payment.NewTestGateway(server.TestGatewayURLs(env.srv.URL)), engine.WithLogger(log)),
		Sessions:       env.sessions,
		HashSecret:     testSecret,
		Logger:         log,
		TrustedProxies: o.trustedProxies,
		Relay:          relay,
	})
	env.client = env.newClient()
	t.Cleanup(func() { env.scan.check(t, append(be.issuedTokens(), gwAPIKey)) })
	return env
}

// leakScan keeps every response a test client received.
type leakScan struct {
	mu        sync.Mutex
	responses []string
}

func (s *leakScan) add(res string) {
	s.mu.Lock()
	s.responses = append(s.responses, res)
	s.mu.Unlock()
}

// check fails the test if any response carried one of the secrets, in a
// header or the body, as is or base64-encoded.
func (s *leakScan) check(t interface{ Errorf(string, ...any) }, secrets []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.responses) == 0 {
		return
	}
	for _, secret := range secrets {
		forms := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), url.QueryEscape(secret)}
		if dot := strings.LastIndex(secret, "."); dot > 0 {
			forms = append(forms, secret[strings.Index(secret, ".")+1:dot]) // a JWT's payload alone
		}
		for _, res := range s.responses {
			for _, f := range forms {
				if strings.Contains(res, f) {
					t.Errorf("a response to the browser carries a secret (%.12s...):\n%.400s", secret, res)
				}
			}
		}
	}
}

// scanTransport records every response (headers and body) for the scan.
type scanTransport struct {
	next http.RoundTripper
	scan *leakScan
}

func (st scanTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := st.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s -> %d\n", r.Method, r.URL, res.StatusCode)
	res.Header.Write(&b)
	b.Write(body)
	st.scan.add(b.String())
	return res, nil
}

// newClient is a browser: a cookie jar, no automatic redirects.
func (env *gwEnv) newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	env.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: scanTransport{next: tr, scan: env.scan},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// request sends method to the gateway's path (or an absolute address)
// with headers as pairs.
func (env *gwEnv) request(c *http.Client, method, path string, body io.Reader, headers ...string) response {
	env.t.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = env.srv.URL + path
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		env.t.Fatal(err)
	}
	return roundTrip(env.t, c, req, headers...)
}

// relayEcho calls /echo through the relay and decodes what the backend got.
func (env *gwEnv) relayEcho(c *http.Client, headers ...string) (response, echoed) {
	env.t.Helper()
	res := env.request(c, http.MethodGet, gwPrefix+"/echo/x", nil, append([]string{"Accept", "application/json"}, headers...)...)
	var e echoed
	if res.status == http.StatusOK {
		res.json(env.t, &e)
	}
	return res, e
}

// hashLogin signs c in with a hash link's key.
func (env *gwEnv) hashLogin(c *http.Client, userKey string) response {
	env.t.Helper()
	body := fmt.Sprintf(`{"userKey":%q,"hash":%q}`, userKey, hashlink.Sign(testSecret, userKey))
	return env.request(c, http.MethodPost, "/api/auth/external-login", strings.NewReader(body), "Content-Type", "application/json")
}

// oidcLogin runs the whole OIDC login as a browser would, from /login?rd=
// to the final redirect, and returns the last response.
func (env *gwEnv) oidcLogin(c *http.Client, rd string) response {
	env.t.Helper()
	res := env.request(c, http.MethodGet, server.LoginPath+"?rd="+url.QueryEscape(rd), nil, "Accept", "text/html")
	for hops := 0; hops < 5 && (res.status == http.StatusFound || res.status == http.StatusSeeOther); hops++ {
		loc := res.header.Get("Location")
		if strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, server.CallbackPath) {
			return res // back on the gateway: the login is done
		}
		res = env.request(c, http.MethodGet, loc, nil, "Accept", "text/html")
	}
	return res
}

// mustOIDCLogin logs in and checks it ended with a redirect to rd.
func (env *gwEnv) mustOIDCLogin(c *http.Client, rd string) {
	env.t.Helper()
	res := env.oidcLogin(c, rd)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != rd {
		env.t.Fatalf("OIDC login ended with %d to %q, want 303 to %q: %s", res.status, res.header.Get("Location"), rd, res.body)
	}
}

// sessionID returns c's session cookie for the gateway.
func (env *gwEnv) sessionID(c *http.Client) string {
	u, _ := url.Parse(env.srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "JSESSIONID" {
			return ck.Value
		}
	}
	return ""
}

// storedSession loads c's session from the store, or nil when there is none.
func (env *gwEnv) storedSession(c *http.Client) *session.Session {
	env.t.Helper()
	id := env.sessionID(c)
	if id == "" {
		return nil
	}
	s, err := env.store.Load(context.Background(), id)
	if err != nil {
		return nil
	}
	return s
}

// lastIssued is the most recent JWT the backend handed out.
func (b *gwBackend) lastIssued() string {
	toks := b.issuedTokens()
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// newH2CClient is a client that speaks only HTTP/2 without TLS (prior
// knowledge), as a proxy in front of the portal may.
func (env *gwEnv) newH2CClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, ExpectContinueTimeout: time.Second}
	env.t.Cleanup(tr.CloseIdleConnections)
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: scanTransport{next: tr, scan: env.scan},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// rawRequest sends target as the request line's path exactly as given
// (backslashes, dot segments), which http.NewRequest would escape.
func (env *gwEnv) rawRequest(c *http.Client, method, target string) response {
	env.t.Helper()
	req, err := http.NewRequest(method, env.srv.URL, nil)
	if err != nil {
		env.t.Fatal(err)
	}
	req.URL.Opaque = target
	return roundTrip(env.t, c, req)
}

// waitFor polls cond until it holds or a few seconds pass: the access log
// and the metrics are written after the client has its answer.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
