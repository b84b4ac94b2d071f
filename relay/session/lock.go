package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// Toucher is implemented by stores that can slide a session's expiry
// without rewriting its values. The Manager uses it on reads, so a read
// that loaded a session just before another request saved new values (a
// refreshed backend JWT) cannot put the old values back.
type Toucher interface {
	// Touch sets LastSeenAt and ExpiresAt of an existing, unexpired
	// session, or returns ErrNotFound.
	Touch(ctx context.Context, id string, lastSeenAt, expiresAt time.Time) error
}

// Locker is implemented by stores shared by several gateway instances: it
// holds a short lease named after a session, so that one instance at a time
// refreshes that session's tokens. The lease expires by itself, so an
// instance that dies holding it blocks the others for ttl at most.
type Locker interface {
	// TryLock takes the lease on id for ttl if nobody holds it (or the
	// holder's lease has run out). ok is false when someone else holds it.
	// release gives the lease back; it does nothing once the lease has
	// passed to someone else.
	TryLock(ctx context.Context, id string, ttl time.Duration) (release func(context.Context) error, ok bool, err error)
}

// ErrLockTimeout means the lease on a session was held by someone else for
// longer than the caller was prepared to wait.
var ErrLockTimeout = errors.New("session: timed out waiting for the session lock")

// lockPoll is how often Lock retries a held lease.
const lockPoll = 20 * time.Millisecond

// Lock takes the store's lease on the session id for ttl, retrying while
// another instance holds it until ctx ends (ErrLockTimeout). Stores that
// are not shared (no Locker) need no lease: it returns a no-op release.
func (m *Manager) Lock(ctx context.Context, id string, ttl time.Duration) (release func(context.Context) error, err error) {
	l, ok := m.store.(Locker)
	if !ok {
		return func(context.Context) error { return nil }, nil
	}
	for {
		release, ok, err := l.TryLock(ctx, id, ttl)
		if err != nil && ctx.Err() != nil {
			// The caller's deadline ran out during an attempt rather than
			// between two (a busy store): still a lease not had in time.
			return nil, fmt.Errorf("%w: %w", ErrLockTimeout, ctx.Err())
		}
		if err != nil {
			return nil, storeError("lock", err)
		}
		if ok {
			return release, nil
		}
		// Jitter keeps instances that wait together from retrying in step.
		wait := lockPoll + rand.N(lockPoll)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrLockTimeout, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// Lookup returns the session with this id as the store has it now, without
// touching it, or ErrNotFound when it is missing or expired. The refresh of
// tokens uses it to re-read a session after taking its lease.
func (m *Manager) Lookup(ctx context.Context, id string) (*Session, error) {
	if !validID(id) {
		return nil, ErrNotFound
	}
	s, err := m.store.Load(ctx, id)
	if err != nil {
		return nil, storeError("lookup", err)
	}
	if m.expired(s, m.now()) {
		return nil, ErrNotFound
	}
	return s, nil
}

// Delete ends the session with this id in the store (every instance sees
// it gone); the caller clears the cookie if it has a response at hand.
func (m *Manager) Delete(ctx context.Context, id string) error {
	if err := m.delete(ctx, id); err != nil {
		return storeError("delete", err)
	}
	return nil
}

// CookieValue returns the session id r's cookie names, if it has the shape
// of one; it says nothing about whether that session exists.
func (m *Manager) CookieValue(r *http.Request) (string, bool) {
	return m.cookieID(r)
}

// Ping reports whether the store answers, for readiness checks; stores
// without a Ping of their own (the database store: the database is checked
// anyway) are taken as ready.
func (m *Manager) Ping(ctx context.Context) error {
	if p, ok := m.store.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// touch slides the expiry of s, through Toucher when the store has it.
func (m *Manager) touch(ctx context.Context, s *Session) error {
	if t, ok := m.store.(Toucher); ok {
		return m.written(ctx, s.ID, t.Touch(ctx, s.ID, s.LastSeenAt, s.ExpiresAt))
	}
	return m.written(ctx, s.ID, m.store.Save(ctx, s))
}
