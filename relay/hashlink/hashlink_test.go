package hashlink

import (
	"strings"
	"testing"
)

// demoHash is md5("secret" + "demo"), computed outside Go (printf secretdemo | md5sum).
const demoHash = "67f85e617e42d1e4c67e351ea63a2cdc"

func TestSign(t *testing.T) {
	tests := []struct {
		name, secret, userKey, want string
	}{
		{"known vector", "secret", "demo", demoHash},
		{"empty input is md5 of nothing", "", "", "d41d8cd98f00b204e9800998ecf8427e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sign(tt.secret, tt.userKey); got != tt.want {
				t.Fatalf("Sign(%q, %q) = %q, want %q", tt.secret, tt.userKey, got, tt.want)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name, secret, userKey, hash string
		want                        bool
	}{
		{"known vector", "secret", "demo", demoHash, true},
		{"uppercase hex", "secret", "demo", strings.ToUpper(demoHash), true},
		{"mixed case hex", "secret", "demo", "67F85e617E42d1e4c67e351ea63a2CDC", true},
		{"signed key round-trips", "s3cr3t", "user-42", Sign("s3cr3t", "user-42"), true},
		{"wrong secret", "other", "demo", demoHash, false},
		{"wrong user key", "secret", "demo2", demoHash, false},
		{"one digit off", "secret", "demo", demoHash[:31] + "d", false},
		{"too short", "secret", "demo", demoHash[:31], false},
		{"too long", "secret", "demo", demoHash + "0", false},
		{"twice the length", "secret", "demo", demoHash + demoHash, false},
		{"not hex", "secret", "demo", "zz" + demoHash[2:], false},
		{"surrounding spaces", "secret", "demo", " " + demoHash + " ", false},
		{"empty hash", "secret", "demo", "", false},
		{"empty user key", "secret", "", Sign("secret", ""), false},
		{"empty secret", "", "demo", Sign("", "demo"), false},
		{"everything empty", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verify(tt.secret, tt.userKey, tt.hash); got != tt.want {
				t.Fatalf("Verify(%q, %q, %q) = %v, want %v", tt.secret, tt.userKey, tt.hash, got, tt.want)
			}
		})
	}
}

// TestVerifyRefusesLengthExtension: a key extended with MD5 padding and a
// suffix (computable from a valid link without the secret) never verifies.
func TestVerifyRefusesLengthExtension(t *testing.T) {
	secret := "0123456789abcdef"
	extended := "demo\x80" + strings.Repeat("\x00", 20) + "-evil"
	// Whatever hash the attacker computed, the key itself is refused.
	if Verify(secret, extended, Sign(secret, extended)) {
		t.Fatal("a user key with padding bytes verified")
	}
	for _, key := range []string{"demo", "demo-1", "a.b_c@d+e", strings.Repeat("k", 200)} {
		if !Verify(secret, key, Sign(secret, key)) {
			t.Errorf("valid key %q does not verify", key)
		}
	}
	for _, key := range []string{"de mo", "demo\n", "dëmo", strings.Repeat("k", 201), "demo/x", "demo?"} {
		if ValidUserKey(key) {
			t.Errorf("key %q accepted", key)
		}
	}
}
