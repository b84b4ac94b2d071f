// Package invitelink signs and checks the portal's own invitation links:
// a token "<id>.<expires>.<mac>" where mac is HMAC-SHA256 over the
// invitation's id and expiry (Unix seconds) under a key of the
// invitation's organisation. The key is derived from the session key for
// each organisation, so a token of one club does not verify on another's
// address, and a rotation of the session key (new key first, old one
// kept) keeps every link valid until it expires.
package invitelink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Purpose is what the session key's derived keys serve (session.Keyring.DeriveKeys).
const Purpose = "invitation links"

// ErrForged means a token is malformed or its MAC is not one of ours (or
// of another organisation).
var ErrForged = errors.New("invitelink: not a valid invitation link")

// Signer makes and checks tokens. The first master key signs, every one
// verifies.
type Signer struct {
	masters [][]byte
}

// NewSigner returns a signer over the given master keys (at least one;
// session.Keyring.DeriveKeys(Purpose) in the server).
func NewSigner(masters [][]byte) *Signer {
	if len(masters) == 0 {
		return nil
	}
	return &Signer{masters: masters}
}

// orgKey is the organisation's own key under one master key.
func orgKey(master []byte, orgID int64) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte("organisation:" + strconv.FormatInt(orgID, 10)))
	return m.Sum(nil)
}

func mac(master []byte, orgID, id int64, expires int64) []byte {
	m := hmac.New(sha256.New, orgKey(master, orgID))
	m.Write([]byte("invitation:" + strconv.FormatInt(id, 10) + ":" + strconv.FormatInt(expires, 10)))
	return m.Sum(nil)
}

// Token returns the token of invitation id of orgID expiring at expires.
func (s *Signer) Token(orgID, id int64, expires time.Time) string {
	exp := expires.Unix()
	return strconv.FormatInt(id, 10) + "." + strconv.FormatInt(exp, 10) + "." +
		base64.RawURLEncoding.EncodeToString(mac(s.masters[0], orgID, id, exp))
}

// Verify checks token for orgID and returns the invitation's id and the
// expiry it was signed with. It does not compare the expiry with the
// clock: the caller decides (and tells an expired link from a forged one).
func (s *Signer) Verify(orgID int64, token string) (id int64, expires time.Time, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > 200 {
		return 0, time.Time{}, ErrForged
	}
	// Strict decoding everywhere, so that each link has exactly one valid
	// spelling: no leading zeros or signs in the numbers, and no set
	// padding bits in the MAC's last character (the lenient decoder reads
	// ...E and ...F alike).
	id, err1 := strconv.ParseInt(parts[0], 10, 64)
	exp, err2 := strconv.ParseInt(parts[1], 10, 64)
	got, err3 := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || id <= 0 ||
		strconv.FormatInt(id, 10) != parts[0] || strconv.FormatInt(exp, 10) != parts[1] {
		return 0, time.Time{}, ErrForged
	}
	for _, master := range s.masters {
		if hmac.Equal(got, mac(master, orgID, id, exp)) {
			return id, time.Unix(exp, 0).UTC(), nil
		}
	}
	return 0, time.Time{}, ErrForged
}

// PathPrefix starts an invitation link's path (under /o/{slug} when the
// organisation is addressed by slug).
const PathPrefix = "/invite/"

// URL is the link of invitation id of orgID on base, the organisation's
// public address (engine.OrganisationAddress).
func (s *Signer) URL(base string, orgID, id int64, expires time.Time) string {
	return strings.TrimSuffix(base, "/") + PathPrefix + s.Token(orgID, id, expires)
}
