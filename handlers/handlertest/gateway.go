package handlertest

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

// The gateway's API key for the backend, its OIDC client registration and
// the prefix of the backend's routes.
const (
	GatewayAPIKey         = "test-api-key-never-in-a-browser-0123"
	GatewayRegistrationID = "portal-test"
	GatewayPrefix         = "/services/admin-service"
)

// IdP is a real OIDC provider in the test process (mockoidc), with
// switches to make its token endpoint refuse or fail refreshes.
type IdP struct {
	Mock      *mockoidc.MockOIDC
	Refreshes atomic.Int32 // refresh_token grants received
	Codes     atomic.Int32 // authorization_code grants received
	// refreshMode: "" ok, "invalid_grant", "down" (connection dropped).
	RefreshMode atomic.Value
	Ended       atomic.Int32 // calls of the end-session endpoint
}

// NewIdP starts an OIDC provider (mockoidc) for the test.
func NewIdP(t *testing.T) *IdP {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.AccessTTL = 20 * time.Second // short-lived, as the exchange's tokens
	m.RefreshTTL = 10 * time.Minute
	idp := &IdP{Mock: m}
	idp.RefreshMode.Store("")
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
				idp.Ended.Add(1)
				w.WriteHeader(http.StatusOK)
				return
			case mockoidc.TokenEndpoint:
				r.ParseForm()
				switch r.PostForm.Get("grant_type") {
				case "refresh_token":
					idp.Refreshes.Add(1)
					switch idp.RefreshMode.Load().(string) {
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
					idp.Codes.Add(1)
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

// Backend is a test admin backend: token exchange (verifying the IdP's
// ID token like the real one), external login, an endpoint echoing what it
// received, a slow one, a streaming one, interim (1xx) answers, content of
// any type and /v3/api-docs.
type Backend struct {
	T         *testing.T
	Srv       *httptest.Server
	Requests  atomic.Int32 // every request received, whatever its path
	Verifier  *gooidc.IDTokenVerifier
	Exchanges atomic.Int32
	Logins    atomic.Int32
	// exchangeTTL is the lifetime of exchanged JWTs; loginTTL that of hash
	// login JWTs (0: no exp claim).
	ExchangeTTL, LoginTTL atomic.Int64
	// exchangeMode / loginMode: "" ok, "reject" (401), "fail" (500).
	ExchangeMode, LoginMode atomic.Value
	Mu                      sync.Mutex
	Issued                  []string // every JWT handed out, for the leak scan
}

// Echoed is what /echo reports about the request it received. The bearer
// token is reported as a digest, so the echo itself never leaks it.
type Echoed struct {
	Method        string              `json:"method"`
	Path          string              `json:"path"`
	RawPath       string              `json:"rawPath"` // the path as escaped on the wire
	RawQuery      string              `json:"rawQuery"`
	Body          string              `json:"body"`
	Authorization string              `json:"authorization"` // "" or "Bearer sha256:<hex>"
	Headers       map[string][]string `json:"headers"`
}

// Digest is how the backend's echo reports a token: its SHA-256, never the token.
func Digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewBackend starts the admin backend the gateway relays to, trusting idp.
func NewBackend(t *testing.T, idp *IdP) *Backend {
	t.Helper()
	b := &Backend{T: t}
	b.ExchangeTTL.Store(int64(5 * time.Minute))
	b.ExchangeMode.Store("")
	b.LoginMode.Store("")
	if idp != nil {
		keys := gooidc.NewRemoteKeySet(context.Background(), idp.Mock.JWKSEndpoint())
		b.Verifier = gooidc.NewVerifier(idp.Mock.Issuer(), keys, &gooidc.Config{ClientID: idp.Mock.ClientID})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /auth/token-exchange", b.TokenExchange)
	mux.HandleFunc("POST /auth/external-login", b.ExternalLogin)
	mux.HandleFunc("/echo/", b.Echo)
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
	b.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.Requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(b.Srv.Close)
	return b
}

// URL is the backend's address.
func (b *Backend) URL() *url.URL {
	u, _ := url.Parse(b.Srv.URL)
	return u
}

// Mint returns an HS256 JWT with exp = now+ttl (no exp when ttl is 0).
func (b *Backend) Mint(sub string, ttl time.Duration) (string, time.Time) {
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
	b.Mu.Lock()
	b.Issued = append(b.Issued, token)
	b.Mu.Unlock()
	return token, exp
}

// IssuedTokens returns the tokens the backend has issued so far.
func (b *Backend) IssuedTokens() []string {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return append([]string(nil), b.Issued...)
}

// TokenExchange answers the backend's token exchange.
func (b *Backend) TokenExchange(w http.ResponseWriter, r *http.Request) {
	b.Exchanges.Add(1)
	if r.Header.Get("X-API-KEY") != GatewayAPIKey {
		http.Error(w, `{"error":"api key"}`, http.StatusUnauthorized)
		return
	}
	switch b.ExchangeMode.Load().(string) {
	case "reject":
		http.Error(w, `{"error":"rejected"}`, http.StatusUnauthorized)
		return
	case "fail":
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		return
	}
	var req backend.ExchangeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.AccessToken == "" || req.IDToken == "" || req.ClientRegistrationID != GatewayRegistrationID {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	sub := "idp-user"
	if b.Verifier != nil { // like the real backend: signature, issuer, audience
		idt, err := b.Verifier.Verify(r.Context(), req.IDToken)
		if err != nil {
			b.T.Errorf("backend: the gateway sent an ID token that does not verify: %v", err)
			http.Error(w, `{"error":"bad id token"}`, http.StatusUnauthorized)
			return
		}
		sub = idt.Subject
	}
	token, exp := b.Mint(sub, time.Duration(b.ExchangeTTL.Load()))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"token": token, "expiresAt": exp.UTC().Format(time.RFC3339Nano)})
}

// ExternalLogin answers the backend's hash login.
func (b *Backend) ExternalLogin(w http.ResponseWriter, r *http.Request) {
	b.Logins.Add(1)
	if r.Header.Get("X-API-KEY") != GatewayAPIKey {
		http.Error(w, `{"error":"api key"}`, http.StatusUnauthorized)
		return
	}
	var req struct{ UserKey, Hash string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.UserKey == "" || req.Hash == "" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	switch b.LoginMode.Load().(string) {
	case "reject":
		http.Error(w, `{"error":"unknown user"}`, http.StatusUnauthorized)
		return
	case "fail":
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		return
	}
	token, _ := b.Mint("user:"+req.UserKey, time.Duration(b.LoginTTL.Load()))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"token": token})
}

// Echo answers any other request with what it received (Echoed).
func (b *Backend) Echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e := Echoed{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: string(body), Headers: map[string][]string{}}
	for k, v := range r.Header {
		if k == "Authorization" {
			continue
		}
		e.Headers[k] = v
	}
	if a := r.Header.Get("Authorization"); a != "" {
		e.Authorization = "Bearer " + Digest(strings.TrimPrefix(a, "Bearer "))
		if !strings.HasPrefix(a, "Bearer ") {
			e.Authorization = "non-bearer " + Digest(a)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(e)
}

// GatewayOptions shape one gateway instance.
type GatewayOptions struct {
	Store          session.Store // default: the database store on db, encrypted
	Bus            session.Bus   // when set, sessions go through a cache on it (TTL a minute: only invalidations keep it right)
	NoBackend      bool
	NoOIDC         bool
	TrustedProxies []netip.Prefix
	ResponseTTO    time.Duration
	MaxBody        int64
	MetricsToken   string
	PublicURL      string    // PORTAL_BASE_URL; default: the test server's address
	TrustedPaths   []string  // PORTAL_RELAY_TRUSTED_PATHS
	AllowedCookies []string  // PORTAL_RELAY_ALLOWED_COOKIES
	LogTo          io.Writer // the server's log; default: discarded
}

// GatewayEnv is a gateway instance with its IdP and backend, and a leak scan of
// every response its clients receive.
type GatewayEnv struct {
	T        *testing.T
	Db       *bun.DB
	Idp      *IdP
	Backend  *Backend
	Srv      *httptest.Server
	Store    session.Store
	Cache    *session.Cache // nil without GatewayOptions.Bus
	Sessions *session.Manager
	Client   *http.Client
	Scan     *LeakScan
}

// GatewayKeyring seals the gateway's sessions in tests.
var GatewayKeyring = func() *session.Keyring {
	kr, err := session.ParseKeyring(session.GenerateKey())
	if err != nil {
		panic(err)
	}
	return kr
}()

// NewGateway starts a gateway on db with a fresh IdP and backend.
func NewGateway(t *testing.T, db *bun.DB, o GatewayOptions) *GatewayEnv {
	t.Helper()
	idp := NewIdP(t)
	return NewGatewayWith(t, db, idp, NewBackend(t, idp), o)
}

// NewGatewayWith starts a gateway instance on shared parts (for tests
// with two instances).
func NewGatewayWith(t *testing.T, db *bun.DB, idp *IdP, be *Backend, o GatewayOptions) *GatewayEnv {
	t.Helper()
	env := &GatewayEnv{T: t, Db: db, Idp: idp, Backend: be, Scan: &LeakScan{}}
	env.Store = o.Store
	if env.Store == nil {
		env.Store = session.NewDBStore(db, session.Encrypted(GatewayKeyring))
	}
	var handler http.Handler
	env.Srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	// As serve does: HTTP/1.1, and h2c for a proxy in front that speaks it.
	env.Srv.Config.Protocols = new(http.Protocols)
	env.Srv.Config.Protocols.SetHTTP1(true)
	env.Srv.Config.Protocols.SetUnencryptedHTTP2(true)
	env.Srv.Start()
	t.Cleanup(env.Srv.Close)
	logTo := o.LogTo
	if logTo == nil {
		logTo = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logTo, nil))
	metrics := server.NewMetrics()
	if o.Bus != nil {
		env.Cache = session.NewCache(o.Bus, session.CacheConfig{TTL: time.Minute, PingEvery: 200 * time.Millisecond})
		sessiontest.StartCache(t, env.Cache)
		metrics.WatchSessionCache(env.Cache)
	}
	env.Sessions = session.NewManager(env.Store, session.Config{Secure: false, Cache: env.Cache,
		SecureRequest: upstream.TrustedProxies(o.TrustedProxies).HTTPS})
	publicURL := o.PublicURL
	if publicURL == "" {
		publicURL = env.Srv.URL
	}
	public, err := url.Parse(publicURL)
	if err != nil {
		t.Fatal(err)
	}
	relay := server.RelayDeps{BaseURL: env.Srv.URL, Metrics: metrics, MetricsToken: o.MetricsToken}
	if !o.NoBackend {
		relay.Upstream = upstream.Config{Backend: be.URL(), Prefix: GatewayPrefix, ResponseHeaderTimeout: o.ResponseTTO, MaxBodyBytes: o.MaxBody,
			PublicURL: public, TrustedPaths: o.TrustedPaths, AllowedCookies: o.AllowedCookies}
		relay.Backend = backend.New(backend.Config{BaseURL: be.URL(), APIKey: GatewayAPIKey})
		if !o.NoOIDC {
			provider := oidc.NewProvider(oidc.ProviderConfig{Issuer: idp.Mock.Issuer(), ClientID: idp.Mock.ClientID, ClientSecret: idp.Mock.ClientSecret,
				Scopes: []string{"openid", "email", "profile"}, RedirectURL: env.Srv.URL + server.CallbackPath})
			relay.OIDC = oidc.NewService(oidc.Config{Provider: provider, Backend: relay.Backend, Sessions: env.Sessions,
				Attempts:       oidc.NewAttemptCookies(GatewayKeyring, server.CallbackPath, env.Sessions.SecureFor),
				RegistrationID: GatewayRegistrationID, OnRefresh: metrics.ObserveRefresh, OnExchange: metrics.ObserveExchange})
		}
	}
	handler = handlers.New(handlers.Deps{
		Engine:         engine.NewService(db, payment.NewTestGateway(server.TestGatewayURLs(env.Srv.URL)), engine.WithLogger(log)),
		Sessions:       env.Sessions,
		HashSecret:     HashSecret,
		Logger:         log,
		TrustedProxies: o.TrustedProxies,
		Relay:          relay,
	})
	env.Client = env.NewClient()
	t.Cleanup(func() { env.Scan.Check(t, append(be.IssuedTokens(), GatewayAPIKey)) })
	return env
}

// LeakScan keeps every response a test client received.
type LeakScan struct {
	Mu        sync.Mutex
	Responses []string
}

// Add keeps a response's text for Check.
func (s *LeakScan) Add(res string) {
	s.Mu.Lock()
	s.Responses = append(s.Responses, res)
	s.Mu.Unlock()
}

// Check fails the test if any response carried one of the secrets, in a
// header or the body, as is or base64-encoded.
func (s *LeakScan) Check(t interface{ Errorf(string, ...any) }, secrets []string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if len(s.Responses) == 0 {
		return
	}
	for _, secret := range secrets {
		forms := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), url.QueryEscape(secret)}
		if dot := strings.LastIndex(secret, "."); dot > 0 {
			forms = append(forms, secret[strings.Index(secret, ".")+1:dot]) // a JWT's payload alone
		}
		for _, res := range s.Responses {
			for _, f := range forms {
				if strings.Contains(res, f) {
					t.Errorf("a response to the browser carries a secret (%.12s...):\n%.400s", secret, res)
				}
			}
		}
	}
}

// ScanTransport records every response (headers and body) for the scan.
type ScanTransport struct {
	Next http.RoundTripper
	Scan *LeakScan
}

// RoundTrip sends r and hands the response's headers and body to the scan.
func (st ScanTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := st.Next.RoundTrip(r)
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
	st.Scan.Add(b.String())
	return res, nil
}

// NewClient is a browser: a cookie jar, no automatic redirects.
func (env *GatewayEnv) NewClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	env.T.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Jar: jar, Transport: ScanTransport{Next: tr, Scan: env.Scan},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Request sends method to the gateway's path (or an absolute address)
// with headers as pairs.
func (env *GatewayEnv) Request(c *http.Client, method, path string, body io.Reader, headers ...string) Response {
	env.T.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = env.Srv.URL + path
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		env.T.Fatal(err)
	}
	return RoundTrip(env.T, c, req, headers...)
}

// RelayEcho calls /echo through the relay and decodes what the backend got.
func (env *GatewayEnv) RelayEcho(c *http.Client, headers ...string) (Response, Echoed) {
	env.T.Helper()
	res := env.Request(c, http.MethodGet, GatewayPrefix+"/echo/x", nil, append([]string{"Accept", "application/json"}, headers...)...)
	var e Echoed
	if res.Status == http.StatusOK {
		res.JSON(env.T, &e)
	}
	return res, e
}

// HashLogin signs c in with a hash link's key.
func (env *GatewayEnv) HashLogin(c *http.Client, userKey string) Response {
	env.T.Helper()
	body := fmt.Sprintf(`{"userKey":%q,"hash":%q}`, userKey, hashlink.Sign(HashSecret, userKey))
	return env.Request(c, http.MethodPost, "/api/auth/external-login", strings.NewReader(body), "Content-Type", "application/json")
}

// OIDCLogin runs the whole OIDC login as a browser would, from /login?rd=
// to the final redirect, and returns the last response.
func (env *GatewayEnv) OIDCLogin(c *http.Client, rd string) Response {
	env.T.Helper()
	res := env.Request(c, http.MethodGet, server.LoginPath+"?rd="+url.QueryEscape(rd), nil, "Accept", "text/html")
	for hops := 0; hops < 5 && (res.Status == http.StatusFound || res.Status == http.StatusSeeOther); hops++ {
		loc := res.Header.Get("Location")
		if strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, server.CallbackPath) {
			return res // back on the gateway: the login is done
		}
		res = env.Request(c, http.MethodGet, loc, nil, "Accept", "text/html")
	}
	return res
}

// MustOIDCLogin logs in and checks it ended with a redirect to rd.
func (env *GatewayEnv) MustOIDCLogin(c *http.Client, rd string) {
	env.T.Helper()
	res := env.OIDCLogin(c, rd)
	if res.Status != http.StatusSeeOther || res.Header.Get("Location") != rd {
		env.T.Fatalf("OIDC login ended with %d to %q, want 303 to %q: %s", res.Status, res.Header.Get("Location"), rd, res.Body)
	}
}

// SessionID returns c's session cookie for the gateway.
func (env *GatewayEnv) SessionID(c *http.Client) string {
	u, _ := url.Parse(env.Srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "JSESSIONID" {
			return ck.Value
		}
	}
	return ""
}

// StoredSession loads c's session from the store, or nil when there is none.
func (env *GatewayEnv) StoredSession(c *http.Client) *session.Session {
	env.T.Helper()
	id := env.SessionID(c)
	if id == "" {
		return nil
	}
	s, err := env.Store.Load(context.Background(), id)
	if err != nil {
		return nil
	}
	return s
}

// LastIssued is the most recent JWT the backend handed out.
func (b *Backend) LastIssued() string {
	toks := b.IssuedTokens()
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// NewH2CClient is a client that speaks only HTTP/2 without TLS (prior
// knowledge), as a proxy in front of the portal may.
func (env *GatewayEnv) NewH2CClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, ExpectContinueTimeout: time.Second}
	env.T.Cleanup(tr.CloseIdleConnections)
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: ScanTransport{Next: tr, Scan: env.Scan},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// RawRequest sends target as the request line's path exactly as given
// (backslashes, dot segments), which http.NewRequest would escape.
func (env *GatewayEnv) RawRequest(c *http.Client, method, target string) Response {
	env.T.Helper()
	req, err := http.NewRequest(method, env.Srv.URL, nil)
	if err != nil {
		env.T.Fatal(err)
	}
	req.URL.Opaque = target
	return RoundTrip(env.T, c, req)
}
