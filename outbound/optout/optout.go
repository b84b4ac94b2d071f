// Package optout signs and checks the tokens of the one-click unsubscribe
// links in reminders (RFC 8058): which organisation, which category of
// messages and which addresses (a message's recipients) stop. The token is
// the link's only credential, so it is signed with a key derived from the
// portal's hash secret (never the hash secret itself: a token must not be
// usable as a hash link, nor the other way round).
package optout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Token is what an unsubscribe link stops.
type Token struct {
	Organisation int64    `json:"o"`
	Category     string   `json:"c"`
	Addresses    []string `json:"a"`
}

// ErrInvalid is a token that was not made by Sign with the same secret,
// or is malformed.
var ErrInvalid = errors.New("invalid unsubscribe token")

// key derives the signing key from the hash secret.
func key(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("portal unsubscribe token v1"))
	return m.Sum(nil)
}

var enc = base64.RawURLEncoding

// Sign makes the token of t: its JSON and its HMAC, each base64url, joined by a dot.
func Sign(secret string, t Token) string {
	body, _ := json.Marshal(t) // a struct of strings and ints: cannot fail
	m := hmac.New(sha256.New, key(secret))
	m.Write(body)
	return enc.EncodeToString(body) + "." + enc.EncodeToString(m.Sum(nil))
}

// Verify checks a token and returns what it stops.
func Verify(secret, token string) (Token, error) {
	body64, sig64, ok := strings.Cut(token, ".")
	if !ok || secret == "" || len(token) > 4096 {
		return Token{}, ErrInvalid
	}
	body, err1 := enc.DecodeString(body64)
	sig, err2 := enc.DecodeString(sig64)
	if err1 != nil || err2 != nil {
		return Token{}, ErrInvalid
	}
	m := hmac.New(sha256.New, key(secret))
	m.Write(body)
	if !hmac.Equal(sig, m.Sum(nil)) {
		return Token{}, ErrInvalid
	}
	var t Token
	if err := json.Unmarshal(body, &t); err != nil || t.Organisation <= 0 || t.Category == "" || len(t.Addresses) == 0 {
		return Token{}, ErrInvalid
	}
	return t, nil
}
