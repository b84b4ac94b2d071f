// Package hashlink checks the hash links that staff e-mail to members:
// `?u=<userKey>&h=<md5hex(secret + userKey)>`. MD5 is the external system's
// contract, not a choice made here; what this package adds is a
// constant-time comparison and strict input checks.
package hashlink

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// Sign returns md5hex(secret + userKey), the hash a valid link carries.
func Sign(secret, userKey string) string {
	sum := md5.Sum([]byte(secret + userKey))
	return hex.EncodeToString(sum[:])
}

// Verify reports whether hash is the link hash of userKey under secret.
// Hex case does not matter; empty values never verify.
func Verify(secret, userKey, hash string) bool {
	if secret == "" || userKey == "" || len(hash) != md5.Size*2 {
		return false
	}
	want := Sign(secret, userKey)
	return subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(hash))) == 1
}
