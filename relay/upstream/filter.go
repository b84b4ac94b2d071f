package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"portal/relay/oidc"
	"portal/relay/session"
)

// TokenRefresher renews the backend JWT of an OIDC session; *oidc.Service
// is one.
type TokenRefresher interface {
	FreshToken(ctx context.Context, sess *session.Session) (string, error)
}

// ErrRefreshUnavailable means an OIDC session's JWT has expired and could
// not be renewed now (IdP, backend or store unavailable); the session is
// kept, and a later request may succeed.
var ErrRefreshUnavailable = errors.New("upstream: token refresh unavailable")

// Filter is the spec's relay filter: it picks the bearer token for a
// relayed request from the session.
type Filter struct {
	// Sessions resolves the session cookie.
	Sessions *session.Manager
	// Refresher renews OIDC sessions' tokens; nil when OIDC is off.
	Refresher TokenRefresher
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Log receives decisions worth knowing about; default slog.Default().
	Log *slog.Logger
}

// Token applies the relay filter table to r and returns the backend JWT to
// relay, or "" to relay without one:
//
//   - no session, or no BACKEND_JWT in it (guest): "";
//   - BACKEND_JWT without BACKEND_JWT_EXPIRY (hash login): the token, unless
//     its own exp claim has passed: then the session is ended (its cookie
//     cleared on w) and "";
//   - OIDC, expiry beyond now + 30 s: the token;
//   - OIDC, expiring: the token the Refresher renews. If the IdP or the
//     backend refuses, the session is ended (cookie cleared) and the error
//     wraps oidc.ErrLoginRequired; if they are unreachable, the old token
//     while it is still valid, else ErrRefreshUnavailable.
//
// A store failure is returned wrapping session.ErrUnavailable.
func (f *Filter) Token(ctx context.Context, w http.ResponseWriter, r *http.Request) (string, error) {
	sess, err := f.Sessions.Get(ctx, r)
	if errors.Is(err, session.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	token := sess.Values[session.AttrBackendJWT]
	if token == "" {
		return "", nil
	}
	now := f.now()
	exp, isOIDC := oidc.Expiry(sess)
	if !isOIDC {
		if claimExp, ok := JWTExpiry(token); ok && !claimExp.After(now) {
			return "", f.clear(ctx, w, r, "hash-login token expired")
		}
		return token, nil
	}
	if oidc.Fresh(sess, now) {
		return token, nil
	}
	if f.Refresher == nil {
		// OIDC was switched off since this session began: use the token
		// while it lasts, then treat it as an expired token.
		if exp.After(now) {
			return token, nil
		}
		return "", f.clear(ctx, w, r, "oidc token expired and oidc is off")
	}
	fresh, err := f.Refresher.FreshToken(ctx, sess)
	switch {
	case err == nil:
		return fresh, nil
	case errors.Is(err, oidc.ErrLoginRequired):
		f.Sessions.End(ctx, w, r) //nolint:errcheck // the refresher already deleted it; this clears the cookie
		return "", err
	case exp.After(now):
		f.log().Warn("relay: token refresh failed; relaying the old token while it lasts", "err", err, "expires_in", exp.Sub(now).Round(time.Second))
		return token, nil
	default:
		return "", fmt.Errorf("%w: %w", ErrRefreshUnavailable, err)
	}
}

// clear ends the session (row and cookie) and relays without a token.
func (f *Filter) clear(ctx context.Context, w http.ResponseWriter, r *http.Request, why string) error {
	if err := f.Sessions.End(ctx, w, r); err != nil {
		// The cookie is cleared; the row times out by itself.
		f.log().Warn("relay: ending session failed", "why", why, "err", err)
	}
	return nil
}

func (f *Filter) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Filter) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.Default()
}

// JWTExpiry reads the exp claim of a JWT without verifying it: the gateway
// only uses it to stop relaying a token the backend would refuse anyway.
func JWTExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	secs, err := claims.Exp.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(secs), 0), true
}
