package invitelink_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"portal/relay/invitelink"
)

func TestTokenVerifies(t *testing.T) {
	old, cur := bytes.Repeat([]byte("o"), 32), bytes.Repeat([]byte("n"), 32)
	exp := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	before := invitelink.NewSigner([][]byte{old})
	after := invitelink.NewSigner([][]byte{cur, old}) // rotated: the new key signs, the old one still verifies

	for name, tok := range map[string]string{"same key": after.Token(2, 41, exp), "before rotation": before.Token(2, 41, exp)} {
		t.Run(name, func(t *testing.T) {
			id, got, err := after.Verify(2, tok)
			if err != nil || id != 41 || !got.Equal(exp) {
				t.Fatalf("Verify = %d, %v, %v; want 41, %v", id, got, err, exp)
			}
		})
	}
}

func TestForgedTokensAreRefused(t *testing.T) {
	s := invitelink.NewSigner([][]byte{bytes.Repeat([]byte("k"), 32)})
	other := invitelink.NewSigner([][]byte{bytes.Repeat([]byte("x"), 32)})
	exp := time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)
	good := s.Token(2, 41, exp)
	parts := strings.Split(good, ".")
	cases := map[string]string{
		"other organisation": s.Token(3, 41, exp),
		"other key":          other.Token(2, 41, exp),
		"id changed":         "42." + parts[1] + "." + parts[2],
		"expiry extended":    parts[0] + "." + "1999999999" + "." + parts[2],
		"no mac":             parts[0] + "." + parts[1],
		"empty":              "",
		"garbage mac":        parts[0] + "." + parts[1] + ".!!",
		"zero id":            "0." + parts[1] + "." + parts[2],
		// The same numbers and MAC bytes spelt otherwise: each link has one spelling.
		"mac padding bits set":       parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-1] + string(paddingNeighbour(parts[2][len(parts[2])-1])),
		"id with a leading zero":     "0" + parts[0] + "." + parts[1] + "." + parts[2],
		"id with a sign":             "+" + parts[0] + "." + parts[1] + "." + parts[2],
		"expiry with a leading zero": parts[0] + ".0" + parts[1] + "." + parts[2],
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.Verify(2, tok); err != invitelink.ErrForged {
				t.Fatalf("Verify(%q) = %v, want ErrForged", tok, err)
			}
		})
	}
	if invitelink.NewSigner(nil) != nil {
		t.Fatal("a signer without keys must be nil")
	}
}

// paddingNeighbour is the base64url character that differs from c only in
// the two bits a 32-byte MAC's last character does not use (E and F).
func paddingNeighbour(c byte) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	return alphabet[strings.IndexByte(alphabet, c)^1]
}
