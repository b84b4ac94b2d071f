package oidc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/singleflight"

	"portal/relay/backend"
	"portal/relay/session"
)

// Session attributes the OIDC login adds to the spec's two. They stay on
// the server, encrypted at rest like the rest of the session.
const (
	// AttrRefreshToken is the IdP refresh token.
	AttrRefreshToken = "OIDC_REFRESH_TOKEN"
	// AttrIDToken is the latest IdP ID token (for the token exchange and
	// the IdP logout).
	AttrIDToken = "OIDC_ID_TOKEN"
	// AttrSubject is the IdP subject of the user.
	AttrSubject = "OIDC_SUBJECT"
)

// RefreshWindow is how long before its expiry a backend JWT is renewed
// (spec, "Limits").
const RefreshWindow = 30 * time.Second

var (
	// ErrLoginDenied means the IdP answered the login with an error (the
	// user cancelled, or the IdP refused).
	ErrLoginDenied = errors.New("oidc: the identity provider did not sign the user in")
	// ErrTokenExchange means the backend did not exchange the IdP tokens
	// for a JWT; it wraps backend.ErrRejected or backend.ErrUnavailable.
	ErrTokenExchange = errors.New("oidc: token exchange failed")
	// ErrLoginRequired means the session can no longer get a backend JWT:
	// the IdP refused the refresh token, the backend refused the exchange,
	// or the session is gone. The session has been deleted.
	ErrLoginRequired = errors.New("oidc: sign-in required")
)

// Config configures a Service.
type Config struct {
	Provider *Provider
	Backend  *backend.Client
	Sessions *session.Manager
	Attempts *AttemptCookies
	// RegistrationID is the clientRegistrationId sent to the token exchange.
	RegistrationID string
	// LockTTL bounds how long one instance may hold a session's refresh
	// lease; default 30 seconds.
	LockTTL time.Duration
	// RefreshTimeout bounds one refresh, waiting for the lease included;
	// default 20 seconds.
	RefreshTimeout time.Duration
	// OnRefresh and OnExchange observe IdP refreshes and token exchanges
	// with their outcome: "ok", "rejected" or "error".
	OnRefresh, OnExchange func(outcome string)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service runs OIDC logins and keeps OIDC sessions' backend JWTs fresh.
type Service struct {
	cfg   Config
	group singleflight.Group
}

// NewService returns a Service for cfg.
func NewService(cfg Config) *Service {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = 30 * time.Second
	}
	if cfg.RefreshTimeout <= 0 {
		cfg.RefreshTimeout = 20 * time.Second
	}
	if cfg.OnRefresh == nil {
		cfg.OnRefresh = func(string) {}
	}
	if cfg.OnExchange == nil {
		cfg.OnExchange = func(string) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{cfg: cfg}
}

// Begin starts a login that returns to returnTo (checked by the caller
// with SafeReturnPath): it sets the attempt cookie on w and returns the
// IdP address to redirect to.
func (s *Service) Begin(ctx context.Context, w http.ResponseWriter, r *http.Request, returnTo string) (string, error) {
	a := NewAttempt(returnTo, s.cfg.Now())
	a.Previous, _ = s.cfg.Sessions.CookieValue(r)
	u, err := s.cfg.Provider.AuthCodeURL(ctx, a)
	if err != nil {
		return "", err
	}
	if err := s.cfg.Attempts.Set(w, r, a); err != nil {
		return "", err
	}
	return u, nil
}

// Finish completes the login the IdP redirected back with (the callback's
// query): it checks the attempt, redeems the code, exchanges the tokens at
// the backend, starts a new session and returns where to go next. On any
// failure no session is started.
func (s *Service) Finish(ctx context.Context, w http.ResponseWriter, r *http.Request) (string, error) {
	q := r.URL.Query()
	a, err := s.cfg.Attempts.Take(w, r, q.Get("state"), s.cfg.Now())
	if err != nil {
		return "", err
	}
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("%w: %.64q", ErrLoginDenied, e)
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("%w: no code", ErrLoginDenied)
	}
	tokens, err := s.cfg.Provider.Redeem(ctx, code, a)
	if err != nil {
		return "", err
	}
	jwt, err := s.exchange(ctx, tokens)
	if err != nil {
		return "", err
	}
	values := map[string]string{
		session.AttrBackendJWT:       jwt.Value,
		session.AttrBackendJWTExpiry: jwt.ExpiresAt.UTC().Format(time.RFC3339Nano),
		AttrRefreshToken:             tokens.RefreshToken,
		AttrIDToken:                  tokens.IDToken,
		AttrSubject:                  tokens.Subject,
	}
	started, err := s.cfg.Sessions.Start(ctx, w, r, "", values)
	if err != nil {
		return "", err
	}
	if a.Previous != "" && a.Previous != started.ID {
		// Best effort: the new session is made; an old one left behind by
		// a store hiccup still ends at its idle timeout.
		_ = s.cfg.Sessions.Delete(ctx, a.Previous)
	}
	return a.ReturnTo, nil
}

func (s *Service) exchange(ctx context.Context, t *Tokens) (backend.Token, error) {
	jwt, err := s.cfg.Backend.Exchange(ctx, backend.ExchangeRequest{
		AccessToken: t.AccessToken, IDToken: t.IDToken, ClientRegistrationID: s.cfg.RegistrationID,
	})
	switch {
	case err == nil:
		s.cfg.OnExchange("ok")
		return jwt, nil
	case errors.Is(err, backend.ErrRejected):
		s.cfg.OnExchange("rejected")
	default:
		s.cfg.OnExchange("error")
	}
	return backend.Token{}, fmt.Errorf("%w: %w", ErrTokenExchange, err)
}

// Expiry returns the BACKEND_JWT_EXPIRY of sess, and whether it has one
// (only OIDC sessions do).
func Expiry(sess *session.Session) (time.Time, bool) {
	raw := sess.Values[session.AttrBackendJWTExpiry]
	if raw == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, true // unreadable: treat as expired
	}
	return t, true
}

// Fresh reports whether an OIDC session's JWT is valid beyond now plus the
// refresh window.
func Fresh(sess *session.Session, now time.Time) bool {
	exp, ok := Expiry(sess)
	return ok && sess.Values[session.AttrBackendJWT] != "" && exp.After(now.Add(RefreshWindow))
}

// FreshToken returns a backend JWT of the OIDC session sess that is valid
// beyond the refresh window, refreshing it through the IdP and the token
// exchange when needed. Concurrent calls for one session in this process
// share one refresh, and the store's lease keeps other instances from
// refreshing it at the same time; whoever waited re-reads the session and
// finds the new token. Errors: ErrLoginRequired (the session was deleted),
// or a transient one (IdP, backend or store unavailable) that leaves the
// session as it was.
func (s *Service) FreshToken(ctx context.Context, sess *session.Session) (string, error) {
	if Fresh(sess, s.cfg.Now()) {
		return sess.Values[session.AttrBackendJWT], nil
	}
	ch := s.group.DoChan(sess.ID, func() (any, error) {
		// The refresh outlives a caller that gives up: the others wait on it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RefreshTimeout)
		defer cancel()
		return s.refresh(rctx, sess.ID)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// refresh renews the JWT of session id under its lease.
func (s *Service) refresh(ctx context.Context, id string) (string, error) {
	release, err := s.cfg.Sessions.Lock(ctx, id, s.cfg.LockTTL)
	if err != nil {
		return "", err
	}
	defer release(context.WithoutCancel(ctx)) //nolint:errcheck // the lease runs out by itself
	cur, err := s.cfg.Sessions.Lookup(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return "", fmt.Errorf("%w: session ended", ErrLoginRequired)
	}
	if err != nil {
		return "", err
	}
	if Fresh(cur, s.cfg.Now()) { // another request or instance was first
		return cur.Values[session.AttrBackendJWT], nil
	}
	rt := cur.Values[AttrRefreshToken]
	if rt == "" {
		return "", s.endSession(ctx, id, "no refresh token")
	}
	tokens, err := s.cfg.Provider.Refresh(ctx, rt, cur.Values[AttrIDToken], cur.Values[AttrSubject])
	switch {
	case err == nil:
		s.cfg.OnRefresh("ok")
	case errors.Is(err, ErrRefreshRejected):
		s.cfg.OnRefresh("rejected")
		return "", s.endSession(ctx, id, err.Error())
	default:
		s.cfg.OnRefresh("error")
		return "", err
	}
	jwt, err := s.exchange(ctx, tokens)
	if errors.Is(err, backend.ErrRejected) {
		return "", s.endSession(ctx, id, err.Error())
	}
	if err != nil {
		return "", err
	}
	cur.Values[session.AttrBackendJWT] = jwt.Value
	cur.Values[session.AttrBackendJWTExpiry] = jwt.ExpiresAt.UTC().Format(time.RFC3339Nano)
	cur.Values[AttrRefreshToken] = tokens.RefreshToken
	cur.Values[AttrIDToken] = tokens.IDToken
	if err := s.cfg.Sessions.Save(ctx, cur); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return "", fmt.Errorf("%w: session ended during refresh", ErrLoginRequired)
		}
		return "", err
	}
	return jwt.Value, nil
}

// endSession deletes a session that cannot get a JWT any more, on every
// instance, and reports ErrLoginRequired.
func (s *Service) endSession(ctx context.Context, id, why string) error {
	if err := s.cfg.Sessions.Delete(ctx, id); err != nil {
		return err // try again later rather than claim the session ended
	}
	return fmt.Errorf("%w: %s", ErrLoginRequired, why)
}

// LogoutURL is where to send the browser after its OIDC session sess has
// ended locally: the IdP's logout, returning to postLogout; "" when sess
// is not an OIDC session or the IdP has no logout endpoint.
func (s *Service) LogoutURL(ctx context.Context, sess *session.Session, postLogout string) string {
	if sess == nil || sess.Values[AttrSubject] == "" {
		return ""
	}
	return s.cfg.Provider.EndSessionURL(ctx, sess.Values[AttrIDToken], postLogout)
}
