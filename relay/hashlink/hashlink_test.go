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
