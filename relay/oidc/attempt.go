package oidc

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"portal/relay/session"
)

// Attempt is one login in progress: what the callback needs to finish it.
type Attempt struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	ReturnTo string    `json:"r"`
	Created  time.Time `json:"t"`
	// Previous is the session the browser had when the login began. The
	// callback cannot see it (the SameSite=Strict session cookie does not
	// come along on the IdP's redirect), yet must end it.
	Previous string `json:"p,omitempty"`
	// Organisation is the organisation a staff sign-in is for: the IdP
	// returns to one callback address for every club.
	Organisation int64 `json:"o,omitempty"`
	// RedirectURL, when set, is the callback address of this attempt
	// instead of the Provider's: a club on a hostname of its own gets its
	// staff sign-in back on that host, where its cookies live.
	RedirectURL string `json:"u,omitempty"`
}

// NewAttempt starts an attempt that returns to returnTo (a path already
// checked with SafeReturnPath).
func NewAttempt(returnTo string, now time.Time) *Attempt {
	return &Attempt{State: random32(), Nonce: random32(), Verifier: oauth2.GenerateVerifier(), ReturnTo: returnTo, Created: now.UTC()}
}

func random32() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// AttemptTTL is how long a login attempt may take at the IdP.
const AttemptTTL = 10 * time.Minute

// attemptCookiePrefix starts the name of every attempt cookie.
const attemptCookiePrefix = "portal_login_"

// ErrAttempt means the callback does not belong to a login attempt this
// browser started recently: a missing, expired or forged state.
var ErrAttempt = errors.New("oidc: no matching login attempt")

// AttemptCookies keeps each login attempt in a cookie of its own, sealed
// (AES-GCM) so the browser can neither read the PKCE verifier and nonce nor
// change the return address. The cookie is SameSite=Lax and scoped to the
// callback path: it must come back on the IdP's cross-site redirect, which
// the SameSite=Strict session cookie does not (the cause of redirect loops
// in gateways that keep the attempt in the session). One cookie per attempt
// lets logins in several tabs finish independently.
type AttemptCookies struct {
	sealer *session.Sealer
	path   string
	secure func(*http.Request) bool
}

// NewAttemptCookies returns attempt cookies sealed with kr, sent only to
// callbackPath, Secure when secure says so.
func NewAttemptCookies(kr *session.Keyring, callbackPath string, secure func(*http.Request) bool) *AttemptCookies {
	return &AttemptCookies{sealer: kr.Sealer("login attempt"), path: callbackPath, secure: secure}
}

// cookieName derives the cookie's name from the state, so the callback
// finds its attempt among several.
func cookieName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return attemptCookiePrefix + hex.EncodeToString(sum[:8])
}

// IsAttemptCookie reports whether a cookie name is one of these, so the
// relay never forwards them.
func IsAttemptCookie(name string) bool {
	return len(name) > len(attemptCookiePrefix) && name[:len(attemptCookiePrefix)] == attemptCookiePrefix
}

// Set stores a on w.
func (ac *AttemptCookies) Set(w http.ResponseWriter, r *http.Request, a *Attempt) error {
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	name := cookieName(a.State)
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    ac.sealer.Seal(raw, []byte(name)),
		Path:     ac.path,
		MaxAge:   int(AttemptTTL / time.Second),
		Secure:   ac.secure(r),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// Take returns the attempt for state from r's cookies and deletes its
// cookie on w, so each attempt finishes at most once.
func (ac *AttemptCookies) Take(w http.ResponseWriter, r *http.Request, state string, now time.Time) (*Attempt, error) {
	if state == "" || len(state) > 256 {
		return nil, fmt.Errorf("%w: no state", ErrAttempt)
	}
	name := cookieName(state)
	c, err := r.Cookie(name)
	if err != nil {
		return nil, fmt.Errorf("%w: no cookie", ErrAttempt)
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: ac.path, MaxAge: -1,
		Secure: ac.secure(r), HttpOnly: true, SameSite: http.SameSiteLaxMode})
	raw, err := ac.sealer.Open(c.Value, []byte(name))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAttempt, err)
	}
	var a Attempt
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAttempt, err)
	}
	if subtle.ConstantTimeCompare([]byte(a.State), []byte(state)) != 1 {
		return nil, fmt.Errorf("%w: state does not match", ErrAttempt)
	}
	if age := now.Sub(a.Created); age < -time.Minute || age > AttemptTTL {
		return nil, fmt.Errorf("%w: attempt expired", ErrAttempt)
	}
	return &a, nil
}
