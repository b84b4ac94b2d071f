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

// ValidUserKey reports whether userKey is made only of the characters user
// keys use (letters, digits and . _ @ + -, at most 200). md5(secret + key)
// allows length extension: from one valid link, a hash for the key followed
// by MD5 padding bytes and any suffix can be computed without the secret.
// Such keys always contain control or non-ASCII bytes, so refusing them
// closes that door.
func ValidUserKey(userKey string) bool {
	if userKey == "" || len(userKey) > 200 {
		return false
	}
	for i := 0; i < len(userKey); i++ {
		c := userKey[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '@' || c == '+' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// Verify reports whether hash is the link hash of userKey under secret.
// Hex case does not matter; empty values and user keys that ValidUserKey
// refuses never verify.
func Verify(secret, userKey, hash string) bool {
	if secret == "" || !ValidUserKey(userKey) || len(hash) != md5.Size*2 {
		return false
	}
	want := Sign(secret, userKey)
	return subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(hash))) == 1
}
