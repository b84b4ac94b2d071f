// Package server is the HTTP centre every audience of the portal builds on:
// the Server with its dependencies, the middleware (request log and id,
// input checks, language, metrics, compression, organisation scope), the
// members' sessions and hash-link sign-in, the one error handler and the
// shared DTOs and paths. The audiences (members, staff, adminapi, gateway)
// embed its Server; package handlers assembles them into routes.
// Registration logic lives in the engine; the HTTP layer only translates.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/books"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/relay/invitelink"
	"portal/relay/session"
	"portal/relay/throttle"
	"portal/relay/upstream"
)

// MaxBodyBytes is the largest request body the API accepts (64 KiB).
const MaxBodyBytes = 64 << 10

// Deps is what the HTTP layer needs.
type Deps struct {
	Engine   *engine.Service
	Sessions *session.Manager
	Gateway  *payment.TestGateway // the built-in payment gateway; nil when a real provider is used
	// StripeWebhook mounts POST /webhooks/stripe (the provider is Stripe).
	StripeWebhook bool
	HashSecret    string
	Logger        *slog.Logger
	// ServerTiming adds statement counts per request in a Server-Timing header (for benchmarks).
	ServerTiming bool
	// TrustedProxies are the peers whose X-Forwarded-* headers are
	// believed: by the relay, HSTS, the request log's client address and
	// request id, the servers entry of /api/openapi.json; nil trusts nobody.
	TrustedProxies upstream.TrustedProxies
	// Relay is the gateway half: relay, backend login, OIDC, metrics (package gateway).
	Relay RelayDeps
	// HSTSMaxAge is the Strict-Transport-Security max-age sent on https
	// requests; 0 sends none.
	HSTSMaxAge time.Duration
	// Stopping is closed when the server begins to shut down: /readyz then
	// fails, so load balancers stop sending new requests. nil: never.
	Stopping <-chan struct{}
	// SignInLimiter keeps the budgets of failed sign-ins (hash login and
	// hash links); nil: in this process's memory.
	SignInLimiter throttle.Limiter
	// SignInLimits are those budgets; zero fields take the defaults.
	SignInLimits throttle.SignInConfig
	// HashSecrets opens the organisations' own hash secrets (sealed with
	// the session key for HashSecretPurpose); nil: no session key, and an
	// organisation with a secret of its own has its hash links refused.
	HashSecrets *session.Sealer
	// OrganisationRefresh is how long the organisations' settings are trusted
	// before they are read again; 0: OrganisationRefresh; negative: read on every
	// request (tests that change them in the database directly).
	OrganisationRefresh time.Duration
	// Invitations checks the portal's own invitation links (keys derived
	// from the session key); nil: no session key, and every invitation
	// link is refused.
	Invitations *invitelink.Signer
	// PublicHost is the host of PORTAL_BASE_URL. An organisation's admin API
	// key may not claim it as the organisation's hostname: it carries every
	// organisation's /o/{slug} pages, and a hostname wins over the prefix.
	// Operators may still assign it (portal orgs set).
	PublicHost string
	// Staff is the staff pages' sign-in (package staff/staffpage); its zero value
	// leaves staff sign-in off.
	Staff StaffDeps
}

// Server holds the handlers' dependencies.
type Server struct {
	engine        *engine.Service
	sessions      *session.Manager
	Gateway       *payment.TestGateway
	hashSecret    string
	log           *slog.Logger
	csrf          *http.CrossOriginProtection
	Proxies       upstream.TrustedProxies
	Relay         *RelayState
	hsts          string // the Strict-Transport-Security value, "" for none
	stopping      <-chan struct{}
	signIn        *throttle.SignIn
	organisations *organisationDirectory
	publicHost    string
	// invitations checks invitation links (members/invitation.go); nil: none.
	invitations *invitelink.Signer
	Staff       StaffDeps
	// StaffPaths are the route paths behind requireStaff (mountStaff).
	StaffPaths map[string]bool
	// AdminRoles are the staff roles of the admin API's routes (AdminRoutes).
	AdminRoles map[string]staff.StaffRole
}

// NewServer holds d for the handlers of every audience.
func NewServer(d Deps) *Server {
	s := &Server{engine: d.Engine, sessions: d.Sessions, Gateway: d.Gateway, hashSecret: d.HashSecret,
		log: d.Logger, csrf: http.NewCrossOriginProtection(), Proxies: d.TrustedProxies, stopping: d.Stopping}
	if d.HSTSMaxAge > 0 {
		s.hsts = "max-age=" + strconv.FormatInt(int64(d.HSTSMaxAge/time.Second), 10)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if d.SignInLimiter == nil {
		d.SignInLimiter = throttle.NewMemory()
	}
	s.signIn = throttle.NewSignIn(d.SignInLimiter, d.SignInLimits)
	s.publicHost = engine.NormalizeHostname(d.PublicHost)
	s.invitations = d.Invitations
	s.Staff = d.Staff
	s.organisations = &organisationDirectory{engine: d.Engine, Sealer: d.HashSecrets, log: s.log, refresh: d.OrganisationRefresh}
	if s.organisations.refresh == 0 {
		s.organisations.refresh = OrganisationRefresh
	}
	return s
}

// Engine is the domain service every handler translates to.
func (s *Server) Engine() *engine.Service { return s.engine }

// Logger is the server's log; a request's own is LogFor.
func (s *Server) Logger() *slog.Logger { return s.log }

// Sessions are the members' sessions.
func (s *Server) Sessions() *session.Manager { return s.sessions }

// HashSecret is the environment's hash-link secret.
func (s *Server) HashSecret() string { return s.hashSecret }

// Organisations is the directory of organisations the requests are scoped to.
func (s *Server) Organisations() *organisationDirectory { return s.organisations }

// PublicHost is the host of PORTAL_BASE_URL (Deps.PublicHost).
func (s *Server) PublicHost() string { return s.publicHost }

// Invitations checks invitation links; nil: none.
func (s *Server) Invitations() *invitelink.Signer { return s.invitations }

// IPExtractor reads the client address for logs and echo's RealIP: from
// X-Forwarded-For, but only the part the trusted proxies added; with none
// trusted, the direct peer (X-Forwarded-* from untrusted peers is ignored).
func IPExtractor(proxies upstream.TrustedProxies) echo.IPExtractor {
	if len(proxies) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range proxies {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// SecurityHeaders sets headers every response carries, and HSTS on
// requests that came over https (directly, or as a trusted proxy says):
// over plain http browsers ignore it, and a header that a client's
// X-Forwarded-Proto could switch on would let anyone pin a test host.
func (s *Server) SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		if s.hsts != "" && s.Proxies.HTTPS(c.Request()) {
			h.Set("Strict-Transport-Security", s.hsts)
		}
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			h.Set("Cache-Control", "no-store")
		}
		return next(c)
	}
}

// RejectCrossOrigin refuses state-changing requests from other origins
// (Sec-Fetch-Site, or Origin against Host); clients that are not browsers
// send neither header and pass.
func (s *Server) RejectCrossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isStripeWebhook(c.Request().URL.Path) {
			return next(c) // a server-to-server call, authenticated by its signature
		}
		if err := s.csrf.Check(c.Request()); err != nil {
			return NewAPIError(http.StatusForbidden, "Cross-origin requests are not allowed.")
		}
		return next(c)
	}
}

// MediaType is r's Content-Type without parameters, in lower case.
func MediaType(r *http.Request) string {
	mt, _, _ := strings.Cut(r.Header.Get(echo.HeaderContentType), ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// RequireJSON makes state-changing API calls declare a JSON body, which a
// plain HTML form on another site cannot do without a CORS preflight.
func RequireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if MediaType(c.Request()) != echo.MIMEApplicationJSON {
			return NewAPIError(http.StatusUnsupportedMediaType, "The request must have Content-Type application/json.")
		}
		return next(c)
	}
}

// Healthz answers GET /healthz: the process is alive.
func (s *Server) Healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// Readyz answers GET /readyz: the server is not shutting down and the
// database (and a session store of its own) is reachable.
func (s *Server) Readyz(c echo.Context) error {
	select {
	case <-s.stopping:
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
	default:
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.engine.DB().PingContext(ctx); err != nil {
		s.LogFor(c).Warn("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	if err := s.sessions.Ping(ctx); err != nil { // a session store of its own (Redis)
		s.LogFor(c).Warn("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	body := map[string]any{"status": "ok"}
	// The last nightly books check's violations, counted and never
	// detailed (this answer is public): a detail, not the status, since a
	// finding is for people to settle and the instance serves fine.
	if n, err := books.FindingCount(ctx, s.engine.DB()); err != nil {
		s.LogFor(c).Warn("readiness check could not count the books' findings", "err", err)
	} else if n > 0 {
		body["books"] = fmt.Sprintf("%d violation(s) found by the last books check (portal books check)", n)
	}
	return c.JSON(http.StatusOK, body)
}

// AdminPrefix is where the admin API lives.
const AdminPrefix = "/api/admin"
