package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"portal/relay/backend"
	"portal/relay/hashlink"
	"portal/relay/session"
)

// The sign-in throttle (relay/throttle) guards both hash sign-ins: POST
// /api/auth/external-login and the hash link GET /membership/register/...
// Only failures spend a budget, per client address and per user key.

// throttleTimeout bounds each call to the throttle's store, so that a slow
// Redis delays a sign-in by at most this much before it fails open.
const throttleTimeout = time.Second

// maxLoggedUserKey is how much of a user key a log line carries: enough to
// recognise a member, bounded for whatever an attacker sends.
const maxLoggedUserKey = 64

// Reasons a hash sign-in fails, as logged.
const (
	FailMissing  = "user key or hash missing"
	failUserKey  = "user key refused (characters or length)"
	failHash     = "hash does not match"
	failRejected = "admin backend refused the sign-in"
	failSecret   = "the organisation's hash secret cannot be decrypted (PORTAL_SESSION_KEY)"
	FailLinksOff = "the organisation accepts its invitation links only (hash links switched off)"
)

// SignInProblem says why a hash sign-in fails, or "" when the hash matches
// the secret of the request's organisation (organisation_scope.go).
func (s *Server) SignInProblem(c echo.Context, userKey, hash string) string {
	secret, ok := s.hashSecretFor(c)
	switch {
	case userKey == "" || hash == "":
		return FailMissing
	case !hashlink.ValidUserKey(userKey):
		return failUserKey
	case hashLinksOff(c):
		return FailLinksOff
	case !ok:
		return failSecret
	case !hashlink.Verify(secret, userKey, hash):
		return failHash
	}
	return ""
}

// CheckSignIn refuses a sign-in with 429 and Retry-After while the
// client's address or the user key has spent its budget of failures. It
// runs before the hash is checked: over the limit even the right hash is
// refused, or guessing would simply go on.
func (s *Server) CheckSignIn(c echo.Context, userKey string) error {
	addr := c.RealIP() // the peer, or X-Forwarded-For from trusted proxies only (e.IPExtractor)
	ctx, cancel := context.WithTimeout(c.Request().Context(), throttleTimeout)
	defer cancel()
	d, err := s.signIn.Check(ctx, addr, userKey)
	if err != nil {
		// Fail open: with the throttle's store (Redis) down, every member
		// would otherwise be locked out. Guessing goes unslowed meanwhile,
		// which a 128-bit hash withstands for the length of an outage.
		s.LogFor(c).WarnContext(ctx, "sign-in throttle unavailable: sign-in not limited", "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	secs := max(1, int(math.Ceil(d.RetryAfter.Seconds())))
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	s.LogFor(c).WarnContext(ctx, "sign-in throttled", "user_key", loggedUserKey(userKey), "retry_after_s", secs)
	return NewAPIError(http.StatusTooManyRequests,
		"Too many failed sign-in attempts. Please wait "+waitText(secs)+", then try again.")
}

// SignInFailed logs a failed sign-in and spends from the budgets of the
// client's address and of the user key. The hash is never logged.
func (s *Server) SignInFailed(c echo.Context, userKey, reason string) {
	addr := c.RealIP()
	ctx, cancel := context.WithTimeout(c.Request().Context(), throttleTimeout)
	defer cancel()
	s.LogFor(c).WarnContext(ctx, "sign-in failed", "reason", reason, "user_key", loggedUserKey(userKey))
	if err := s.signIn.Failed(ctx, addr, userKey); err != nil {
		s.LogFor(c).WarnContext(ctx, "sign-in throttle unavailable: failure not counted", "err", err)
	}
}

// loggedUserKey is a user key cut to a bounded length.
func loggedUserKey(userKey string) string { return clip(userKey, maxLoggedUserKey) }

// waitText says a wait in words: "40 seconds", "2 minutes".
func waitText(secs int) string {
	switch {
	case secs == 1:
		return "a second"
	case secs < 120:
		return fmt.Sprintf("%d seconds", secs)
	}
	return fmt.Sprintf("%d minutes", (secs+59)/60)
}

// hashLinksOff reports whether the request's organisation refuses the
// spec's hash links: its members open the portal's invitation links.
func hashLinksOff(c echo.Context) bool {
	t := OrganisationOfRequest(c)
	return t != nil && t.hashLinksOff
}

// backendLogin makes the hash login's call to the admin backend, when one
// is configured, and returns the session values to start with: the
// backend's JWT as BACKEND_JWT, without an expiry. The backend refusing is
// a 401, the backend failing a 502; either way no session is started.
func (s *Server) backendLogin(c echo.Context, userKey, hash string) (map[string]string, error) {
	g := s.Relay
	if g == nil || g.Backend == nil {
		return nil, nil
	}
	var system string // the organisation's registration system id (spec: "from the tenant context")
	if t := OrganisationOfRequest(c); t != nil {
		system = t.RegistrationSystemID
	}
	tok, err := g.Backend.ExternalLoginFor(c.Request().Context(), userKey, hash, system)
	switch {
	case err == nil:
		g.Metrics.observeBackendLogin("ok")
		return map[string]string{session.AttrBackendJWT: tok.Value}, nil
	case errors.Is(err, backend.ErrRejected):
		g.Metrics.observeBackendLogin("rejected")
		s.LogFor(c).Info("hash login refused by the admin backend", "err", err)
		return nil, NewAPIError(http.StatusUnauthorized, "The admin backend did not accept this sign-in.")
	default:
		g.Metrics.observeBackendLogin("error")
		s.LogFor(c).Warn("hash login: admin backend unavailable", "err", err)
		return nil, NewAPIError(http.StatusBadGateway, "The admin backend cannot be reached. Please try again shortly.")
	}
}
