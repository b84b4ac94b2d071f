// Package handlers is the HTTP layer: routes, the JSON form API, the
// external login, the payment pages, middleware and the one error handler.
// Registration logic lives in the engine; handlers only translate.
package handlers

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"portal/engine"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/relay/invitelink"
	"portal/relay/session"
	"portal/relay/throttle"
	"portal/relay/upstream"
	"portal/static"
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
	// Relay is the gateway half: relay, backend login, OIDC, metrics (gateway.go).
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
	// Staff is the staff pages' sign-in (staff_auth.go); its zero value
	// leaves staff sign-in off.
	Staff StaffDeps
}

// Server holds the handlers' dependencies.
type Server struct {
	engine        *engine.Service
	sessions      *session.Manager
	gateway       *payment.TestGateway
	hashSecret    string
	log           *slog.Logger
	csrf          *http.CrossOriginProtection
	proxies       upstream.TrustedProxies
	gw            *gatewayState
	hsts          string // the Strict-Transport-Security value, "" for none
	stopping      <-chan struct{}
	signIn        *throttle.SignIn
	organisations *organisationDirectory
	publicHost    string
	// invitations checks invitation links (page_invitation.go); nil: none.
	invitations *invitelink.Signer
	staff       StaffDeps
	// staffPaths are the route paths behind requireStaff (mountStaff).
	staffPaths map[string]bool
	// adminRoles are the staff roles of the admin API's routes (AdminRoutes).
	adminRoles map[string]staff.StaffRole
}

// New returns the application's echo instance with every route.
func New(d Deps) *echo.Echo {
	s := &Server{engine: d.Engine, sessions: d.Sessions, gateway: d.Gateway, hashSecret: d.HashSecret,
		log: d.Logger, csrf: http.NewCrossOriginProtection(), proxies: d.TrustedProxies, stopping: d.Stopping}
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
	s.staff = d.Staff
	s.organisations = &organisationDirectory{engine: d.Engine, sealer: d.HashSecrets, log: s.log, refresh: d.OrganisationRefresh}
	if s.organisations.refresh == 0 {
		s.organisations.refresh = OrganisationRefresh
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.IPExtractor = ipExtractor(s.proxies)
	e.Use(s.assignRequestID)
	if d.ServerTiming {
		e.Use(serverTiming)
	}
	e.Use(s.logRequests)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.logFor(c).Error("panic", "err", err, "stack", string(stack))
			return err
		}}))
	e.Use(s.securityHeaders)
	e.Use(s.requireOrganisation) // resolveOrganisation (pre-routing, below) found the organisation, or none
	e.Use(s.chooseLanguage)
	e.Use(compressAnswers(func(c echo.Context) bool {
		// Static files are compressed once at start; relayed responses stream as
		// they come; API answers are small JSON, not worth the CPU.
		p := c.Request().URL.Path
		return strings.HasPrefix(p, "/static/") || isAPI(c.Request()) || s.relayOwnsBodyLimit(c)
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: "64K", Skipper: func(c echo.Context) bool {
		return s.relayOwnsBodyLimit(c) || isBulk(c.Request()) || isStaffUpload(c.Request()) // all set limits of their own
	}}))
	e.Use(s.rejectCrossOrigin)
	e.Use(s.rejectControlCharacters)

	e.GET("/brand.css", s.brandStylesheet)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.Match([]string{http.MethodGet, http.MethodHead}, "/static/*", echo.WrapHandler(static.Handler())) // echo's GET does not answer HEAD

	api := e.Group("/api")
	api.GET("/openapi.json", s.openAPI)
	api.POST("/auth/external-login", s.externalLogin, requireJSON)
	forms := api.Group("/forms", s.requireSession)
	forms.GET("/membership/:periodid", s.getMembershipForm)
	forms.POST("/next", s.postNext, requireJSON)
	forms.POST("/processes/:processid/reset", s.postReset, requireJSON)
	forms.POST("/processes/:processid/resume", s.postResume, requireJSON)
	forms.POST("/processes/:processid/back", s.postBack, requireJSON)
	s.mountAdmin(api) // api_admin.go: API keys instead of sessions
	api.Any("/*", func(c echo.Context) error { return echo.ErrNotFound }, s.requireSession)

	reg := e.Group("/membership/register/:periodId")
	reg.GET("", s.registerEntry)
	reg.GET("/:u", s.registerEntry)
	reg.GET("/persons", s.personsPage)
	reg.POST("/persons", s.submitPersons)
	reg.GET("/step/:n", s.stepPage)
	reg.POST("/step/:n", s.submitAnswers)
	reg.POST("/back", s.backStep)
	reg.POST("/change", s.changeStep)
	reg.GET("/review", s.reviewPage)
	reg.POST("/confirm", s.confirm)
	reg.GET("/done", s.donePage)
	reg.GET("/reset", s.resetPage)
	reg.POST("/reset", s.resetRegistration)
	reg.POST("/resume", s.resumeRegistration)

	e.GET(paymentReturnPath, s.paymentReturn)
	e.GET(payLinkPrefix+":reference", s.payLink)
	e.POST(payLinkPrefix+":reference", s.choosePayMethod)
	e.POST(payLinkPrefix+":reference/mandate", s.giveMandate)
	e.POST(payLinkPrefix+":reference/mandate/keep", s.keepMandate)
	e.POST(payLinkPrefix+":reference/mandate/change", s.changeMandate)
	e.POST(payLinkPrefix+":reference/mandate/revoke", s.revokeMandate)
	if d.StripeWebhook {
		e.POST(StripeWebhookPath, s.stripeWebhook)
	}
	e.POST(StripeWebhookPath+"/:org", s.organisationStripeWebhook)
	e.GET(verifyPrefix+":token", s.verifyCard)
	e.GET(UnsubscribePath, s.unsubscribePage)
	e.POST(UnsubscribePath, s.unsubscribeNow)
	e.POST("/membership/payment-retry", s.paymentRetry)
	e.POST(paymentRetryPath, s.paymentRetry)
	e.GET(invitationPath, s.openInvitation)
	s.mountPersonalData(e) // personal_data.go
	if s.gateway != nil {
		e.GET(testGatewayPayPrefix+":reference", s.testGatewayPage)
		e.POST(testGatewayPayPrefix+":reference", s.testGatewayDecide)
	}
	s.mountStaff(e) // staff_routes.go
	s.mountGateway(e, d.Relay)
	e.Pre(removeUploadedFiles)   // around all but the request count: it sees the request as the handler left it
	e.Pre(s.resolveOrganisation) // after mountGateway's countRequests, which must wrap everything
	return e
}

// ipExtractor reads the client address for logs and echo's RealIP: from
// X-Forwarded-For, but only the part the trusted proxies added; with none
// trusted, the direct peer (X-Forwarded-* from untrusted peers is ignored).
func ipExtractor(proxies upstream.TrustedProxies) echo.IPExtractor {
	if len(proxies) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range proxies {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// securityHeaders sets headers every response carries, and HSTS on
// requests that came over https (directly, or as a trusted proxy says):
// over plain http browsers ignore it, and a header that a client's
// X-Forwarded-Proto could switch on would let anyone pin a test host.
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		if s.hsts != "" && s.proxies.HTTPS(c.Request()) {
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

// rejectCrossOrigin refuses state-changing requests from other origins
// (Sec-Fetch-Site, or Origin against Host); clients that are not browsers
// send neither header and pass.
func (s *Server) rejectCrossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if isStripeWebhook(c.Request().URL.Path) {
			return next(c) // a server-to-server call, authenticated by its signature
		}
		if err := s.csrf.Check(c.Request()); err != nil {
			return newAPIError(http.StatusForbidden, "Cross-origin requests are not allowed.")
		}
		return next(c)
	}
}

// mediaType is r's Content-Type without parameters, in lower case.
func mediaType(r *http.Request) string {
	mt, _, _ := strings.Cut(r.Header.Get(echo.HeaderContentType), ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// requireJSON makes state-changing API calls declare a JSON body, which a
// plain HTML form on another site cannot do without a CORS preflight.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if mediaType(c.Request()) != echo.MIMEApplicationJSON {
			return newAPIError(http.StatusUnsupportedMediaType, "The request must have Content-Type application/json.")
		}
		return next(c)
	}
}

// healthz answers GET /healthz: the process is alive.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers GET /readyz: the server is not shutting down and the
// database (and a session store of its own) is reachable.
func (s *Server) readyz(c echo.Context) error {
	select {
	case <-s.stopping:
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
	default:
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.engine.DB().PingContext(ctx); err != nil {
		s.logFor(c).Warn("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	if err := s.sessions.Ping(ctx); err != nil { // a session store of its own (Redis)
		s.logFor(c).Warn("readiness check failed", "err", err)
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
