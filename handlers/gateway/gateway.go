package gateway

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/handlers/server"
	"portal/relay/backend"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/upstream"
	"portal/views"
)

// MountGateway adds the login, logout, relay and metrics routes.
func (s *Server) MountGateway(e *echo.Echo, d server.RelayDeps) {
	g := &server.RelayState{Backend: d.Backend, OIDC: d.OIDC, BaseURL: strings.TrimRight(d.BaseURL, "/"),
		Metrics: d.Metrics, MetricsToken: d.MetricsToken}
	if g.Metrics == nil {
		g.Metrics = server.NewMetrics()
	}
	uc := d.Upstream
	if uc.Prefix == "" {
		uc.Prefix = upstream.DefaultPrefix
	}
	g.Prefix = "/" + strings.Trim(uc.Prefix, "/")
	if uc.Backend != nil {
		if uc.Log == nil {
			uc.Log = s.Logger()
		}
		g.Proxy = upstream.New(uc, upstream.Hooks{ErrorResponse: s.writeRelayError, GatewayCookie: s.IsGatewayCookie, Trusted: s.Proxies})
	}
	g.Filter = &upstream.Filter{Sessions: s.Sessions(), Log: s.Logger()}
	if d.OIDC != nil {
		g.Filter.Refresher = d.OIDC
	}
	s.Relay = g

	e.Pre(g.Metrics.CountRequests)
	if !d.MetricsElsewhere {
		e.GET(server.MetricsPath, g.Metrics.EchoHandler(g.MetricsToken))
	}
	e.GET(server.LoginPath, s.login)
	e.GET(server.CallbackPath, s.loginCallback)
	e.POST(server.LogoutPath, s.logout)
	e.Any(g.Prefix, s.relay)
	e.Any(g.Prefix+"/*", s.relay)
}

// gatewayHeaders are set on every answer by securityHeaders and are
// removed from a relayed one: the portal's page policy (script-src 'self')
// would both break the backend's own pages and, being same-origin, let
// their scripts run anyway; framing and referrers are the backend's pages'
// business. The relay instead sandboxes active content in an opaque origin
// (upstream.Config.TrustedPaths). X-Content-Type-Options: nosniff stays on
// every answer, relayed or not.
var gatewayHeaders = []string{"Content-Security-Policy", "X-Frame-Options", "Referrer-Policy"}

// relay answers any method on /services/admin-service/** (the prefix is
// configurable): the relay filter picks the session's backend JWT, and the
// request goes to the backend, which decides authorisation.
func (s *Server) relay(c echo.Context) error {
	g := s.Relay
	w, r := c.Response(), c.Request()
	if g.Proxy == nil {
		s.writeRelayError(w, r, http.StatusServiceUnavailable, "The admin backend is not configured on this gateway.")
		return nil
	}
	start := time.Now()
	defer func() { g.Metrics.ObserveRelay(c.Response().Status, time.Since(start)) }()

	token, err := g.Filter.Token(r.Context(), w, r)
	server.MarkSessionLoaded(r.Context())
	switch {
	case errors.Is(err, oidc.ErrLoginRequired):
		return s.loginRequired(c)
	case errors.Is(err, upstream.ErrRefreshUnavailable):
		s.LogFor(c).Warn("relay: token refresh unavailable", "err", err)
		w.Header().Set("Retry-After", server.RetryAfterSeconds)
		s.writeRelayError(w, r, http.StatusServiceUnavailable, "Your sign-in cannot be renewed right now. Please try again shortly.")
		return nil
	case errors.Is(err, session.ErrUnavailable):
		s.LogFor(c).Warn("relay: session store unavailable", "err", err)
		w.Header().Set("Retry-After", server.RetryAfterSeconds)
		s.writeRelayError(w, r, http.StatusServiceUnavailable, "Sessions are temporarily unavailable. Please try again shortly.")
		return nil
	case err != nil:
		return err
	}
	for _, h := range gatewayHeaders {
		w.Header().Del(h)
	}
	g.Proxy.Forward(w, r, token)
	return nil
}

// writeRelayError writes the spec's HTTP error body. Relay errors are
// always JSON: the relay's clients are API clients, whatever they accept.
func (s *Server) writeRelayError(w http.ResponseWriter, r *http.Request, status int, message string) {
	body := server.HTTPErrorBody{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Status: status,
		Error: http.StatusText(status), Message: message, Path: r.URL.Path, Errors: []server.FieldErrorBody{}}
	writeJSONTo(w, status, body)
}

func writeJSONTo(w http.ResponseWriter, status int, body any) {
	h := w.Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // the status is out; a failed write means the client left
}

// LoginRequiredBody is the 401 answer to a relayed API call whose session
// needs a new sign-in: the spec's error body plus where to sign in.
type LoginRequiredBody struct {
	server.HTTPErrorBody
	LoginURL string `json:"loginUrl"`
}

// loginRequired sends a page navigation to the login, and gives any other
// request (XHR, htmx, JSON, a POST whose body a redirect would lose) a 401
// with the login address.
func (s *Server) loginRequired(c echo.Context) error {
	r := c.Request()
	if isNavigation(r) {
		return c.Redirect(http.StatusSeeOther, loginURL(oidc.ReturnPathOr(r.URL.RequestURI(), "/")))
	}
	ret := "/"
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
		ret = oidc.ReturnPathOr(ref.RequestURI(), "/")
	}
	body := LoginRequiredBody{
		HTTPErrorBody: server.HTTPErrorBody{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Status: http.StatusUnauthorized,
			Error: http.StatusText(http.StatusUnauthorized), Message: "Your sign-in has ended. Sign in again to continue.",
			Path: r.URL.Path, Errors: []server.FieldErrorBody{}},
		LoginURL: loginURL(ret),
	}
	writeJSONTo(c.Response(), http.StatusUnauthorized, body)
	return nil
}

func loginURL(returnTo string) string {
	if returnTo == "/" {
		return server.LoginPath
	}
	return server.LoginPath + "?rd=" + url.QueryEscape(returnTo)
}

// isNavigation reports whether r is a browser loading a page: a GET or
// HEAD that is not XHR or htmx and that fetch metadata or Accept mark as a
// navigation.
func isNavigation(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if r.Header.Get("HX-Request") != "" || r.Header.Get("X-Requested-With") != "" {
		return false
	}
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" {
		return mode == "navigate"
	}
	return prefersHTML(r)
}

// prefersHTML reports whether r's Accept names HTML.
func prefersHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// wantsJSON reports whether r is an API client rather than a page load.
func wantsJSON(r *http.Request) bool {
	return !prefersHTML(r) || r.Header.Get("HX-Request") != "" || r.Header.Get("X-Requested-With") != ""
}

// login answers GET /login?rd=/path: it starts an OIDC login and sends the
// browser to the IdP. rd must be a relative path on this site; anything
// else returns to "/".
func (s *Server) login(c echo.Context) error {
	g := s.Relay
	if g.OIDC == nil {
		return echo.ErrNotFound
	}
	w, r := c.Response(), c.Request()
	returnTo := oidc.ReturnPathOr(c.QueryParam("rd"), "/")
	target, err := g.OIDC.Begin(r.Context(), w, r, returnTo)
	if err != nil {
		return s.loginFailed(c, loginNotStarted, err)
	}
	w.Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusFound, target)
}

// loginCallback answers GET /oauth2/callback, where the IdP returns the
// browser: it finishes the login (code, tokens, token exchange, a new
// session) and redirects to the address the login started from. A failure
// shows an error page (JSON for API clients) and never redirects again, so
// a failing exchange cannot loop.
func (s *Server) loginCallback(c echo.Context) error {
	g := s.Relay
	if g.OIDC == nil {
		return echo.ErrNotFound
	}
	w, r := c.Response(), c.Request()
	w.Header().Set("Cache-Control", "no-store")
	returnTo, err := g.OIDC.Finish(r.Context(), w, r)
	if err == nil {
		return c.Redirect(http.StatusSeeOther, returnTo)
	}
	for _, f := range loginFailures {
		if errors.Is(err, f.cause) {
			return s.loginFailed(c, f, err)
		}
	}
	return err
}

// loginFailure is how the gateway answers one kind of failed login step:
// what it logs, and the page (or error body) the browser gets.
type loginFailure struct {
	cause    error // the error kind, matched with errors.Is
	level    slog.Level
	log      string
	status   int
	rejected int // the status when the admin service rejected the exchange, else 0
	title    string
	message  string
	link     string
	linkText string
}

// signInUnreachable is the page of an identity provider that cannot be
// reached, whether at the start of a login or on its way back.
const signInUnreachable = "The sign-in service cannot be reached right now. Please try again shortly."

// loginNotStarted answers a login that could not start (the identity
// provider's discovery failed): any error.
var loginNotStarted = loginFailure{level: slog.LevelWarn, log: "oidc: login could not start",
	status: http.StatusServiceUnavailable, title: "Sign-in is unavailable", message: signInUnreachable, link: server.LoginPath, linkText: "Try again"}

// loginFailures are the failures of a login's callback, by kind; a failure
// of none of these kinds goes to the error handler as it is.
var loginFailures = []loginFailure{
	{cause: oidc.ErrAttempt, level: slog.LevelInfo, log: "oidc: callback without a matching attempt",
		status: http.StatusBadRequest, title: "Sign-in expired",
		message: "This sign-in was not started here, has expired or was already used. Please sign in again.", link: server.LoginPath, linkText: "Sign in"},
	{cause: oidc.ErrLoginDenied, level: slog.LevelInfo, log: "oidc: login denied",
		status: http.StatusUnauthorized, title: "Sign-in cancelled",
		message: "The sign-in was cancelled or refused by the identity provider.", link: server.LoginPath, linkText: "Sign in again"},
	{cause: oidc.ErrTokenExchange, level: slog.LevelWarn, log: "oidc: token exchange failed",
		status: http.StatusBadGateway, rejected: http.StatusForbidden, title: "Sign-in could not be completed",
		message: "Token exchange failed: the admin service did not accept this sign-in. Please try again later or contact support.", link: "/", linkText: "Home"},
	{cause: oidc.ErrInvalidToken, level: slog.LevelWarn, log: "oidc: login with an invalid token",
		status: http.StatusUnauthorized, title: "Sign-in failed",
		message: "The identity provider's answer could not be verified. Please sign in again.", link: server.LoginPath, linkText: "Sign in again"},
	{cause: oidc.ErrProviderUnavailable, level: slog.LevelWarn, log: "oidc: identity provider unavailable",
		status: http.StatusBadGateway, title: "Sign-in is unavailable", message: signInUnreachable, link: server.LoginPath, linkText: "Try again"},
	{cause: session.ErrUnavailable, level: slog.LevelWarn, log: "oidc: session store unavailable",
		status: http.StatusServiceUnavailable, title: "Temporarily unavailable",
		message: "Sessions are temporarily unavailable. Please try again shortly.", link: server.LoginPath, linkText: "Try again"},
}

// loginFailed logs a failed login step at f's level and answers it with
// f's page.
func (s *Server) loginFailed(c echo.Context, f loginFailure, err error) error {
	s.LogFor(c).Log(c.Request().Context(), f.level, f.log, "err", err)
	status := f.status
	if f.rejected != 0 && errors.Is(err, backend.ErrRejected) {
		status = f.rejected
	}
	return s.gatewayPage(c, status, f.title, f.message, f.link, f.linkText)
}

// gatewayPage answers a failed login step: a page with a way on for
// browsers, the spec's error body for API clients.
func (s *Server) gatewayPage(c echo.Context, status int, title, message, link, linkText string) error {
	r := c.Request()
	if wantsJSON(r) {
		s.writeRelayError(c.Response(), r, status, message)
		return nil
	}
	return server.Render(c, status, views.ErrorPage(views.ErrorModel{Chrome: s.Chrome(title), Message: message, Link: link, LinkText: linkText}))
}

// LogoutBody answers POST /logout for API clients.
type LogoutBody struct {
	// Redirect is where the browser goes next: the IdP's logout for an
	// OIDC session, else "/".
	Redirect string `json:"redirect"`
}

// logout answers POST /logout: the session is deleted from the store (so
// it ends on every instance) and its cookie cleared; an OIDC session then
// goes on to the IdP's logout. Browsers get a 303, API clients JSON.
func (s *Server) logout(c echo.Context) error {
	g := s.Relay
	w, r := c.Response(), c.Request()
	ctx := r.Context()
	target := "/"
	if sess, err := s.Sessions().Get(ctx, r); err == nil && g.OIDC != nil {
		if u := g.OIDC.LogoutURL(ctx, sess, g.BaseURL+"/"); u != "" {
			target = u
		}
	}
	if err := s.Sessions().End(ctx, w, r); err != nil {
		return server.SessionStoreError(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		return c.JSON(http.StatusOK, LogoutBody{Redirect: target})
	}
	return c.Redirect(http.StatusSeeOther, target)
}
