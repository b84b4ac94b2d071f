// Package session keeps server-side HTTP sessions for the portal.
//
// The browser holds only a random token in a cookie (JSESSIONID by default);
// everything else — the user key of a hash login, the backend JWT and its
// expiry — lives in a Store on the server. A Manager ties the two together:
// it issues the cookie, loads the session behind it and enforces the idle
// timeout and the absolute lifetime, so the timeouts do not depend on the
// browser honouring cookie expiry.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"maps"
	"strconv"
	"time"
)

// Session attribute names used by the login flows and the relay filter
// (spec, "Session attributes").
const (
	// AttrBackendJWT holds the backend-issued JWT; both login flows set it.
	AttrBackendJWT = "BACKEND_JWT"
	// AttrBackendJWTExpiry holds the JWT's expiry as the token exchange
	// returns it (ISO 8601, UTC); only the OIDC login sets it, so its absence
	// marks a hash-login token.
	AttrBackendJWTExpiry = "BACKEND_JWT_EXPIRY"
	// AttrOrganisation binds a session to the organisation it was started
	// in (its id in decimal): a session of one organisation is no session
	// in another. The database store also writes it to a column of its
	// own, so that a household's sessions are found by organisation and
	// user key (the personal-data export and erasure); absent for a
	// session bound to none.
	AttrOrganisation = "ORGANISATION_ID"
)

// Session is the server-side state of one browser or API client.
type Session struct {
	// ID is the random token held in the cookie. Stores never keep it in
	// clear, so a leaked store does not yield usable session ids.
	ID string
	// UserKey is the identity from a hash login; "" when there is none.
	UserKey string
	// Values are the session attributes, e.g. AttrBackendJWT.
	Values map[string]string
	// CreatedAt starts the absolute lifetime; LastSeenAt the idle timeout.
	CreatedAt, LastSeenAt time.Time
	// ExpiresAt is when the session stops being valid:
	// min(LastSeenAt+IdleTimeout, CreatedAt+MaxLifetime).
	ExpiresAt time.Time
}

// Store keeps sessions. Implementations must treat an expired session like a
// missing one, and must report failures of the backing service wrapped with
// ErrUnavailable so callers can tell "log in again" from "try again later".
// RunStoreConformance in package sessiontest checks an implementation.
type Store interface {
	// Create inserts a new session; s.ID must be set.
	Create(ctx context.Context, s *Session) error
	// Load returns the session with this id, or ErrNotFound when it is
	// missing or its ExpiresAt has passed.
	Load(ctx context.Context, id string) (*Session, error)
	// Save writes UserKey, Values, LastSeenAt and ExpiresAt of an existing,
	// unexpired session, or returns ErrNotFound.
	Save(ctx context.Context, s *Session) error
	// Delete removes the session; deleting a missing session is not an error.
	Delete(ctx context.Context, id string) error
	// DeleteExpired removes sessions whose ExpiresAt is before now and
	// reports how many it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// Announcer is implemented by stores that announce every change and
// removal of a session in the same atomic step as the write: the Redis
// store's scripts PUBLISH, and on PostgreSQL a trigger on the sessions
// table NOTIFYs at commit. Then no writer can fail between the write and
// its announcement, and the Manager does not publish again.
type Announcer interface {
	// AnnouncesOn reports whether the store's announcements reach bus's
	// subscribers. A bus on another channel hears nothing of them, so the
	// Manager then publishes itself.
	AnnouncesOn(bus Bus) bool
}

var (
	// ErrNotFound means there is no valid session: none was sent, it never
	// existed, it expired or it was ended. Callers ask the client to log in.
	ErrNotFound = errors.New("session: not found")
	// ErrUnavailable wraps transient store failures. Callers answer 503 and
	// keep the session cookie, since the session may well still be valid.
	ErrUnavailable = errors.New("session: store unavailable")
)

// idBytes is the entropy of a session id: 256 bits.
const idBytes = 32

// newID returns a fresh session token: 32 bytes from crypto/rand, base64url
// without padding.
func newID() string {
	b := make([]byte, idBytes)
	rand.Read(b) // never returns an error (crypto/rand, Go 1.24+); it crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// validID reports whether id has the shape newID produces, so foreign or
// forged cookie values never reach the store.
func validID(id string) bool {
	if len(id) != base64.RawURLEncoding.EncodedLen(idBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// hashID returns the hex SHA-256 of a session token: the only form in which
// stores keep it.
func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// organisationOf is the organisation a session's values bind it to; nil
// when they bind it to none (or to no valid id).
func organisationOf(values map[string]string) *int64 {
	id, err := strconv.ParseInt(values[AttrOrganisation], 10, 64)
	if err != nil || id <= 0 {
		return nil
	}
	return &id
}

// normTime gives stored times one form: UTC, microseconds (PostgreSQL's
// precision), no monotonic reading, so a value round-trips unchanged.
func normTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

// clone returns a deep copy of s, so callers and stores never share a map.
func (s *Session) clone() *Session {
	c := *s
	c.Values = cloneValues(s.Values)
	return &c
}

// cloneValues copies v; the result is never nil.
func cloneValues(v map[string]string) map[string]string {
	c := make(map[string]string, len(v))
	maps.Copy(c, v)
	return c
}
