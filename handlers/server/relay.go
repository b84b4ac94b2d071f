package server

import (
	"strings"

	"github.com/labstack/echo/v4"

	"portal/relay/backend"
	"portal/relay/oidc"
	"portal/relay/upstream"
)

// What the centre knows of the gateway half (package gateway): its routes,
// what it needs, its state once mounted, and which paths it relays, which
// the middleware leave to the relay.

// Gateway routes.
const (
	// LoginPath starts an OIDC login: GET /login?rd=/path.
	LoginPath = "/login"
	// CallbackPath is where the IdP returns: GET /oauth2/callback.
	CallbackPath = "/oauth2/callback"
	// LogoutPath ends the session: POST /logout.
	LogoutPath = "/logout"
	// MetricsPath serves Prometheus metrics.
	MetricsPath = "/metrics"
)

// RelayDeps is what the gateway half needs: the relay to the admin
// backend, the backend login and the OIDC login. Its zero value keeps
// both off: the relay then answers 503 and /login 404.
type RelayDeps struct {
	// Upstream is the operator's relay configuration, finished; with
	// Backend nil the relay answers 503. mountGateway builds the one
	// upstream.Proxy from it, adding the hooks only the HTTP layer has:
	// its error body, its cookies and Deps.TrustedProxies.
	Upstream upstream.Config
	// Backend is the admin backend client for the hash login's backend
	// call; nil: the hash login makes no backend call.
	Backend *backend.Client
	// OIDC runs OIDC logins and refreshes; nil: OIDC is off.
	OIDC *oidc.Service
	// BaseURL is the public address, for the IdP's post-logout redirect.
	BaseURL string
	// Metrics collects the gateway's metrics; nil: a fresh set.
	Metrics *Metrics
	// MetricsToken, when set, is the bearer token GET /metrics requires.
	MetricsToken string
	// MetricsElsewhere keeps /metrics off the public address: a listener
	// of its own serves Metrics.Handler (PORTAL_METRICS_ADDR).
	MetricsElsewhere bool
}

// RelayState is the gateway half of the Server.
type RelayState struct {
	Prefix       string
	Proxy        *upstream.Proxy // nil: no backend configured
	Filter       *upstream.Filter
	Backend      *backend.Client
	OIDC         *oidc.Service
	BaseURL      string
	Metrics      *Metrics
	MetricsToken string
}

// RelayOwnsBodyLimit tells the API's 64 KiB body limit to leave relayed
// requests alone: the relay has a limit of its own.
func (s *Server) RelayOwnsBodyLimit(c echo.Context) bool {
	return s.Relay != nil && s.isRelayPath(c.Request().URL.Path)
}

func (s *Server) isRelayPath(p string) bool {
	return p == s.Relay.Prefix || strings.HasPrefix(p, s.Relay.Prefix+"/")
}

// IsGatewayCookie reports whether a cookie is the gateway's own: the
// session cookie and the login attempt cookies are never relayed.
func (s *Server) IsGatewayCookie(name string) bool {
	return name == s.sessions.CookieName() || oidc.IsAttemptCookie(name)
}
