// Package upstream relays requests under the relay prefix
// (/services/admin-service by default) to the admin backend: the relay
// filter decides which backend JWT, if any, goes along as the bearer
// credential, and Proxy forwards the request with httputil.ReverseProxy.
// The gateway does not decide authorisation here; the backend does.
package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	DefaultPrefix                = "/services/admin-service"
	DefaultConnectTimeout        = 5 * time.Second
	DefaultResponseHeaderTimeout = 30 * time.Second
	DefaultMaxBodyBytes          = 10 << 20
)

// Config configures a Proxy.
type Config struct {
	// Backend is the admin backend's base address.
	Backend *url.URL
	// Prefix is stripped from the path before forwarding; default
	// /services/admin-service. The backend sees it as X-Forwarded-Prefix.
	Prefix string
	// ConnectTimeout bounds connecting to the backend (then 502);
	// ResponseHeaderTimeout bounds waiting for its answer (then 504).
	ConnectTimeout, ResponseHeaderTimeout time.Duration
	// MaxBodyBytes is the largest request body relayed (then 413);
	// default 10 MiB.
	MaxBodyBytes int64
	// PublicURL is the portal's public address (PORTAL_BASE_URL). Without a
	// trusted proxy in front, the backend's X-Forwarded-Host and -Proto
	// come from it rather than from the client's Host; nil: from the
	// request.
	PublicURL *url.URL
	// TrustedPaths are path prefixes below Prefix (such as /swagger-ui)
	// whose HTML, SVG and XML the operator trusts to run in the portal's
	// origin; everywhere else such content is sandboxed.
	TrustedPaths []string
	// AllowedCookies names the cookies the backend may set; any other
	// Set-Cookie is dropped, and the gateway's own even when listed.
	AllowedCookies []string
	// Transport overrides the transport to the backend (benchmarks, tests).
	Transport http.RoundTripper
	// Log receives relay failures; default slog.Default().
	Log *slog.Logger
}

// Hooks are what the HTTP layer adds to an operator's Config: its own
// error answers, its own cookies and its trust in the peers in front.
type Hooks struct {
	// ErrorResponse writes the gateway's own error answers (400, 413, 502,
	// 504) in the spec's error body.
	ErrorResponse func(w http.ResponseWriter, r *http.Request, status int, message string)
	// GatewayCookie reports whether a cookie name belongs to the gateway
	// (the session and login cookies): such cookies are never forwarded,
	// and the backend cannot set them.
	GatewayCookie func(name string) bool
	// Trusted are the proxies whose X-Forwarded-* headers are extended
	// rather than replaced.
	Trusted TrustedProxies
}

// Proxy forwards requests to the admin backend.
type Proxy struct {
	cfg   Config
	hooks Hooks
	rp    *httputil.ReverseProxy
}

// New returns a Proxy for cfg, whose Backend must be set, answering and
// trusting as hooks say.
func New(cfg Config, hooks Hooks) *Proxy {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	cfg.Prefix = "/" + strings.Trim(cfg.Prefix, "/")
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.ResponseHeaderTimeout <= 0 {
		cfg.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if hooks.GatewayCookie == nil {
		hooks.GatewayCookie = func(string) bool { return false }
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Transport == nil {
		cfg.Transport = &http.Transport{
			Proxy:                 nil, // the backend is addressed directly, never through an environment proxy
			DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   cfg.ConnectTimeout,
			ResponseHeaderTimeout: cfg.ResponseHeaderTimeout,
			ExpectContinueTimeout: time.Second,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
	}
	p := &Proxy{cfg: cfg, hooks: hooks}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
		BufferPool:     copyBuffers,
	}
	return p
}

// copyBuffers are the buffers the relay copies answers through. Without a
// pool ReverseProxy allocates 32 KiB per request, which under load was most
// of the bytes the portal allocated per relayed request and so most of its
// garbage collection (docs/BENCHMARKS.md).
var copyBuffers = &bufferPool{}

// bufferPool is an httputil.BufferPool on a sync.Pool of 32 KiB buffers.
type bufferPool struct{ p sync.Pool }

const copyBufferSize = 32 << 10

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, copyBufferSize)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) != copyBufferSize {
		return
	}
	buf = buf[:copyBufferSize]
	b.p.Put(&buf)
}

// Prefix is the path prefix this proxy serves.
func (p *Proxy) Prefix() string { return p.cfg.Prefix }

// MaxBodyBytes is the largest request body relayed.
func (p *Proxy) MaxBodyBytes() int64 { return p.cfg.MaxBodyBytes }

type relayKey struct{}

// relayState travels with one relayed request.
type relayState struct {
	token    string
	in       *http.Request // the inbound request, for error answers
	trusted  bool          // the path is one of TrustedPaths
	tooLarge atomic.Bool
}

// Forward relays r to the backend, with token as the bearer credential
// ("" for none), and streams the answer to w.
func (p *Proxy) Forward(w http.ResponseWriter, r *http.Request, token string) {
	if hasDotSegment(r.URL.EscapedPath()) {
		// "/services/admin-service/../x" would leave the backend's base
		// path, and so would "..;", "%2e%2e" or `..\` on a Java backend.
		p.hooks.ErrorResponse(w, r, http.StatusBadRequest, "The path must not contain . or .. segments.")
		return
	}
	if r.ContentLength > p.cfg.MaxBodyBytes {
		p.hooks.ErrorResponse(w, r, http.StatusRequestEntityTooLarge, p.tooLargeMessage())
		return
	}
	st := &relayState{token: token, in: r, trusted: p.isTrustedPath(r.URL.EscapedPath())}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &limitedBody{rc: r.Body, left: p.cfg.MaxBodyBytes, st: st}
	}
	rw := newRelayWriter(w, func(h http.Header) { secureAnswer(h, st.trusted) })
	p.rp.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), relayKey{}, st)))
}

// isTrustedPath reports whether an escaped path (with the prefix) lies in
// one of TrustedPaths, on a segment boundary: /swagger-ui covers
// /swagger-ui and /swagger-ui/index.html, not /swagger-uix. It compares
// the path as sent, so an encoded slash (/swagger-ui%2Fx), which the
// backend may read as one segment, is not in /swagger-ui.
func (p *Proxy) isTrustedPath(escaped string) bool {
	rel := strings.TrimPrefix(escaped, p.cfg.Prefix)
	for _, t := range p.cfg.TrustedPaths {
		t = "/" + strings.Trim(t, "/")
		if rel == t || strings.HasPrefix(rel, t+"/") {
			return true
		}
	}
	return false
}

func (p *Proxy) tooLargeMessage() string {
	return "The request body is larger than " + strconv.FormatInt(p.cfg.MaxBodyBytes, 10) + " bytes."
}

// rewrite builds the outbound request. ReverseProxy has already removed
// hop-by-hop headers, Forwarded and X-Forwarded-* from it.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	st, _ := pr.In.Context().Value(relayKey{}).(*relayState)

	escaped := strings.TrimPrefix(pr.In.URL.EscapedPath(), p.cfg.Prefix)
	if escaped == "" {
		escaped = "/"
	}
	if unescaped, err := url.PathUnescape(escaped); err == nil {
		pr.Out.URL.Path = unescaped
		pr.Out.URL.RawPath = escaped
	}
	pr.SetURL(p.cfg.Backend)

	if p.hooks.Trusted.Trusts(pr.In) {
		p.setForwardedFromProxy(pr)
	} else {
		p.setForwarded(pr)
	}

	// Credentials: the session's token and nothing the browser sent.
	pr.Out.Header.Del("Authorization")
	pr.Out.Header.Del("Proxy-Authorization")
	pr.Out.Header.Del("X-Api-Key")
	if st != nil && st.token != "" {
		pr.Out.Header.Set("Authorization", "Bearer "+st.token)
	}
	p.stripGatewayCookies(pr.Out.Header)
}

// spoofableForwarding are forwarding headers besides X-Forwarded-For,
// -Host and -Proto (which ReverseProxy removes itself) that backends such as
// Spring's ForwardedHeaderFilter believe when building absolute links.
// Without a trusted proxy in front, the client wrote them.
var spoofableForwarding = []string{"X-Forwarded-Port", "X-Forwarded-Ssl", "X-Forwarded-Server", "X-Forwarded-Scheme",
	"X-Forwarded-Prefix", "X-Real-Ip", "X-Url-Scheme", "Front-End-Https"}

// setForwarded describes a request from a client with no trusted proxy in
// front. The backend builds absolute links (redirects, the API docs'
// servers) from X-Forwarded-Host and -Proto, so they name the configured
// public address: the client's Host header is whatever the client chose.
// A path in that address (a portal served below one) goes before the prefix.
func (p *Proxy) setForwarded(pr *httputil.ProxyRequest) {
	for _, h := range spoofableForwarding {
		pr.Out.Header.Del(h)
	}
	pr.SetXForwarded()
	pub := p.cfg.PublicURL
	if pub == nil {
		pr.Out.Header.Set("X-Forwarded-Prefix", p.cfg.Prefix)
		return
	}
	pr.Out.Header.Set("X-Forwarded-Host", pub.Host)
	if pr.In.TLS == nil {
		pr.Out.Header.Set("X-Forwarded-Proto", pub.Scheme)
	}
	pr.Out.Header.Set("X-Forwarded-Prefix", strings.TrimRight(pub.Path, "/")+p.cfg.Prefix)
}

// setForwardedFromProxy extends the trusted proxy's X-Forwarded-* headers.
func (p *Proxy) setForwardedFromProxy(pr *httputil.ProxyRequest) {
	in, out := pr.In.Header, pr.Out.Header
	if ip, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
		if prior := strings.Join(in.Values("X-Forwarded-For"), ", "); prior != "" {
			ip = prior + ", " + ip
		}
		out.Set("X-Forwarded-For", ip)
	}
	proto := strings.ToLower(strings.TrimSpace(in.Get("X-Forwarded-Proto")))
	if proto != "http" && proto != "https" {
		proto = "http"
		if pr.In.TLS != nil {
			proto = "https"
		}
	}
	out.Set("X-Forwarded-Proto", proto)
	host := strings.TrimSpace(in.Get("X-Forwarded-Host"))
	if host == "" {
		host = pr.In.Host
	}
	out.Set("X-Forwarded-Host", host)
	out.Set("X-Forwarded-Prefix", strings.TrimRight(strings.TrimSpace(in.Get("X-Forwarded-Prefix")), "/")+p.cfg.Prefix)
}

// stripGatewayCookies removes the gateway's own cookies from a Cookie header.
func (p *Proxy) stripGatewayCookies(h http.Header) {
	lines := h.Values("Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ";") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			name, _, _ := strings.Cut(part, "=")
			if !p.hooks.GatewayCookie(strings.TrimSpace(name)) {
				kept = append(kept, part)
			}
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// modifyResponse lets the backend set only the cookies the operator
// allowed, and never the gateway's own: every cookie it sets lands in the
// portal's origin, where it could shadow or fix the portal's cookies. The
// rest of the answer's headers pass unchanged, but for those secureAnswer
// adds.
func (p *Proxy) modifyResponse(res *http.Response) error {
	lines := res.Header.Values("Set-Cookie")
	if len(lines) == 0 {
		return nil
	}
	res.Header.Del("Set-Cookie")
	for _, line := range lines {
		name, _, _ := strings.Cut(line, "=")
		if p.cookieAllowed(strings.TrimSpace(name)) {
			res.Header.Add("Set-Cookie", line)
		} else {
			p.cfg.Log.Debug("relay: backend cookie dropped", "name", strings.TrimSpace(name), "path", res.Request.URL.Path)
		}
	}
	return nil
}

func (p *Proxy) cookieAllowed(name string) bool {
	return !p.hooks.GatewayCookie(name) && slices.Contains(p.cfg.AllowedCookies, name)
}

// errorHandler answers for a backend that could not be asked: 413 for a
// body over the limit, 504 for a backend too slow to answer, 502 for one
// that cannot be reached or broke the connection.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	// r is the outbound request; answers name the path the client asked for.
	st, _ := r.Context().Value(relayKey{}).(*relayState)
	if st != nil {
		r = st.in.WithContext(r.Context())
	}
	// The gateway's request log line has the method, path and client under
	// the same request id (the gateway sets X-Request-Id to its own). Only
	// the cause is logged here, without the outbound URL a *url.Error
	// carries: a path can be hundreds of kilobytes.
	log := p.cfg.Log.With("request_id", r.Header.Get("X-Request-Id"))
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case st != nil && st.tooLarge.Load():
		p.hooks.ErrorResponse(w, r, http.StatusRequestEntityTooLarge, p.tooLargeMessage())
	case r.Context().Err() != nil:
		// The client went away; nobody is left to answer.
		log.Debug("relay: client gone", "err", err)
	case isTimeout(err) && !isDial(err):
		log.Warn("relay: backend too slow", "err", err)
		p.hooks.ErrorResponse(w, r, http.StatusGatewayTimeout, "The admin backend did not answer in time.")
	default:
		log.Warn("relay: backend unreachable", "err", err)
		p.hooks.ErrorResponse(w, r, http.StatusBadGateway, "The admin backend cannot be reached.")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isDial(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// hasDotSegment reports whether an escaped path has a segment that a
// backend may read as "." or "..": as sent, or after any number of rounds
// of percent-decoding (a proxy or framework in front may decode again);
// with ";" path parameters removed (Tomcat and Jetty read "..;x" as "..");
// and with backslashes as separators (as some servers and Windows file
// systems do). Decoding is lenient, as most servers' is: an invalid escape
// elsewhere in the path ("%zz") stays as it is and does not end the check.
func hasDotSegment(escaped string) bool {
	p := escaped
	for range 8 { // each round shortens the path; more rounds than any server decodes
		if dotSegmentIn(p) {
			return true
		}
		next := lenientUnescape(p)
		if next == p {
			return false
		}
		p = next
	}
	return true // still decoding after eight rounds: no honest path looks like that
}

// lenientUnescape decodes every valid %HH and leaves anything else as it is.
func lenientUnescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func dotSegmentIn(path string) bool {
	for seg := range strings.FieldsFuncSeq(path, func(r rune) bool { return r == '/' || r == '\\' }) {
		seg, _, _ = strings.Cut(seg, ";")
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// limitedBody fails reads past the limit and records that it did, so the
// error handler can answer 413 whatever the transport made of the error.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	st   *relayState
}

var errBodyTooLarge = errors.New("upstream: request body too large")

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe one byte: a body of exactly the limit is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.st.tooLarge.Store(true)
			return 0, errBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
