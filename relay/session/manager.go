package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Defaults for the zero fields of Config (spec, "Session cookie (production)"
// and "Limits").
const (
	// DefaultCookieName is the spec's cookie name.
	DefaultCookieName = "JSESSIONID"
	// DefaultIdleTimeout is the spec's session timeout.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxLifetime bounds a session that is kept busy: a working day.
	DefaultMaxLifetime = 12 * time.Hour
	// DefaultTouchEvery keeps reads from writing on every request.
	DefaultTouchEvery = time.Minute
)

// Config sets the cookie and the timeouts of a Manager. Zero fields take the
// defaults, except Secure: its zero value is false, so production config
// must set it.
type Config struct {
	// CookieName names the session cookie; default "JSESSIONID".
	CookieName string
	// Secure sets the cookie's Secure flag. It is false only in explicit
	// development config; the flag comes from config, not from the request,
	// so no X-Forwarded-Proto needs to be trusted to get it right.
	Secure bool
	// SecureRequest, when set, also makes the cookie Secure for requests it
	// reports as https: a TLS connection, or X-Forwarded-Proto: https from
	// a trusted proxy. It can add the flag, never remove it.
	SecureRequest func(*http.Request) bool
	// IdleTimeout ends a session that has not been used for this long;
	// default 30 minutes. Each use slides it.
	IdleTimeout time.Duration
	// MaxLifetime ends a session this long after it started, however busy;
	// default 12 hours.
	MaxLifetime time.Duration
	// TouchEvery limits how often a read writes LastSeenAt back; default one
	// minute. The effective idle timeout is thus between
	// IdleTimeout-TouchEvery and IdleTimeout.
	TouchEvery time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Cache, when set, serves Get from memory while it is coherent with
	// the other instances (see Cache); every write through the Manager
	// invalidates it everywhere. Lookup always reads the store.
	Cache *Cache
}

// Manager issues session cookies and resolves them to sessions in a Store,
// enforcing the idle timeout and the absolute lifetime itself so that they
// hold whatever the store's own expiry does.
type Manager struct {
	store Store
	cfg   Config
}

// NewManager returns a Manager on store, with cfg's zero fields defaulted.
func NewManager(store Store, cfg Config) *Manager {
	if cfg.CookieName == "" {
		cfg.CookieName = DefaultCookieName
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxLifetime <= 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.TouchEvery <= 0 {
		cfg.TouchEvery = DefaultTouchEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{store: store, cfg: cfg}
}

// Start creates a new session bound to userKey with a copy of values, sets
// its cookie on w and deletes the session named by r's cookie, if any. A new
// id at every login is the defence against session fixation: a token planted
// before login never becomes an authenticated one.
func (m *Manager) Start(ctx context.Context, w http.ResponseWriter, r *http.Request, userKey string, values map[string]string) (*Session, error) {
	if old, ok := m.cookieID(r); ok {
		if err := m.delete(ctx, old); err != nil {
			return nil, storeError("start: delete old session", err)
		}
	}
	now := m.now()
	s := &Session{
		ID:         newID(),
		UserKey:    userKey,
		Values:     cloneValues(values),
		CreatedAt:  now,
		LastSeenAt: now,
	}
	s.ExpiresAt = m.expiresAt(s)
	if err := m.store.Create(ctx, s); err != nil {
		return nil, storeError("start", err)
	}
	http.SetCookie(w, m.cookie(r, s.ID, 0))
	return s, nil
}

// Get returns the session named by r's cookie, or ErrNotFound when there is
// no valid one. Each use slides the idle timeout; LastSeenAt is written back
// only when it is older than TouchEvery, so most requests do not write.
// Other store failures come back wrapped with ErrUnavailable.
func (m *Manager) Get(ctx context.Context, r *http.Request) (*Session, error) {
	id, ok := m.cookieID(r)
	if !ok {
		return nil, ErrNotFound
	}
	s, err := m.load(ctx, id)
	if err != nil {
		return nil, storeError("get", err)
	}
	now := m.now()
	if m.expired(s, now) {
		// The row stays until DeleteExpired: the store hides it already
		// once its expires_at passes, and a failed delete here would turn
		// "log in again" into "try again later".
		return nil, ErrNotFound
	}
	if now.Sub(s.LastSeenAt) > m.cfg.TouchEvery {
		touched := s.clone()
		touched.LastSeenAt = now
		touched.ExpiresAt = m.expiresAt(touched)
		if err := m.touch(ctx, touched); err != nil {
			return nil, storeError("get: touch", err)
		}
		s = touched
	}
	return s, nil
}

// Save stores the values and user key of s and counts as activity: it moves
// LastSeenAt to now and recomputes ExpiresAt. A session that has expired
// meanwhile is not revived; Save returns ErrNotFound.
func (m *Manager) Save(ctx context.Context, s *Session) error {
	now := m.now()
	if m.expired(s, now) {
		return ErrNotFound
	}
	s.LastSeenAt = now
	s.ExpiresAt = m.expiresAt(s)
	if err := m.written(ctx, s.ID, m.store.Save(ctx, s)); err != nil {
		return storeError("save", err)
	}
	return nil
}

// End deletes the session named by r's cookie and clears the cookie on w. The
// cookie is cleared even when the store fails, so the browser is logged out
// at once; the error (wrapped with ErrUnavailable) tells the caller that the
// server-side session may live on until it times out.
func (m *Manager) End(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	http.SetCookie(w, m.cookie(r, "", -1))
	if id, ok := m.cookieID(r); ok {
		if err := m.delete(ctx, id); err != nil {
			return storeError("end", err)
		}
	}
	return nil
}

// load reads the session with this id through the cache, if there is one.
func (m *Manager) load(ctx context.Context, id string) (*Session, error) {
	c := m.cfg.Cache
	if c == nil {
		return m.store.Load(ctx, id)
	}
	idHash := hashID(id)
	if s, ok := c.get(idHash); ok {
		return s, nil
	}
	t, loadedAt := c.begin(), time.Now()
	s, err := m.store.Load(ctx, id)
	if err == nil {
		c.put(idHash, s, t, loadedAt)
	}
	return s, err
}

// delete removes the session from the store and from every instance's cache.
func (m *Manager) delete(ctx context.Context, id string) error {
	return m.written(ctx, id, m.store.Delete(ctx, id))
}

// written follows a store write of the session id that returned err: it
// tells the caches even when the write failed, since it may have been made
// anyway, and returns the write's error, else the telling's.
func (m *Manager) written(ctx context.Context, id string, err error) error {
	if cerr := m.changed(ctx, id); err == nil {
		err = cerr
	}
	return err
}

// changed tells every instance's cache that the session with this id was
// written; without a cache there is nothing to tell, and a store that
// announces its own writes has told the others already.
func (m *Manager) changed(ctx context.Context, id string) error {
	c := m.cfg.Cache
	if c == nil {
		return nil
	}
	if a, ok := m.store.(Announcer); ok && a.AnnouncesOn(c.bus) {
		c.evict(hashID(id))
		return nil
	}
	return c.invalidate(ctx, hashID(id))
}

// cookie returns the session cookie with value and maxAge (0: a browser-session
// cookie; -1: delete it). The server enforces timeouts, so no Expires is sent.
func (m *Manager) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     m.cfg.CookieName,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		Secure:   m.SecureFor(r),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	}
}

// SecureFor reports whether cookies set in answer to r carry the Secure
// flag: always when configured, else when SecureRequest says r came over https.
func (m *Manager) SecureFor(r *http.Request) bool {
	return m.cfg.Secure || (m.cfg.SecureRequest != nil && r != nil && m.cfg.SecureRequest(r))
}

// CookieName is the name of the session cookie.
func (m *Manager) CookieName() string { return m.cfg.CookieName }

// IdleTimeout is the configured idle timeout.
func (m *Manager) IdleTimeout() time.Duration { return m.cfg.IdleTimeout }

// Now is the manager's clock.
func (m *Manager) Now() time.Time { return m.now() }

// cookieID returns the session id from r's cookie if it has the shape of one.
func (m *Manager) cookieID(r *http.Request) (string, bool) {
	c, err := r.Cookie(m.cfg.CookieName)
	if err != nil || !validID(c.Value) {
		return "", false
	}
	return c.Value, true
}

func (m *Manager) now() time.Time { return normTime(m.cfg.Now()) }

// expiresAt is min(LastSeenAt+IdleTimeout, CreatedAt+MaxLifetime).
func (m *Manager) expiresAt(s *Session) time.Time {
	idle := s.LastSeenAt.Add(m.cfg.IdleTimeout)
	if limit := s.CreatedAt.Add(m.cfg.MaxLifetime); limit.Before(idle) {
		return limit
	}
	return idle
}

// expired reports whether s has been idle or alive for too long at now.
func (m *Manager) expired(s *Session, now time.Time) bool {
	return now.Sub(s.LastSeenAt) > m.cfg.IdleTimeout || now.Sub(s.CreatedAt) > m.cfg.MaxLifetime
}

// storeError passes ErrNotFound through and marks anything else as
// unavailable, whatever the Store implementation returned.
func storeError(op string, err error) error {
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnavailable) {
		return fmt.Errorf("session: %s: %w", op, err)
	}
	return fmt.Errorf("session: %s: %w: %w", op, ErrUnavailable, err)
}
