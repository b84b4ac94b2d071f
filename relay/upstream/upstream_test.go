package upstream_test

import (
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"portal/relay/upstream"
)

func jwtWith(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." + enc.EncodeToString([]byte(payload)) + ".sig"
}

func TestJWTExpiry(t *testing.T) {
	tests := []struct {
		name  string
		token string
		want  time.Time
		ok    bool
	}{
		{"exp", jwtWith(`{"exp":1700000000}`), time.Unix(1700000000, 0), true},
		{"fractional exp", jwtWith(`{"exp":1700000000.5}`), time.Unix(1700000000, 0), true},
		{"no exp", jwtWith(`{"sub":"x"}`), time.Time{}, false},
		{"string exp", jwtWith(`{"exp":"soon"}`), time.Time{}, false},
		{"not a JWT", "opaque-token", time.Time{}, false},
		{"bad base64", "a.!!!.c", time.Time{}, false},
		{"bad JSON", jwtWith(`{`), time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := upstream.JWTExpiry(tt.token)
			if ok != tt.ok || !got.Equal(tt.want) {
				t.Fatalf("JWTExpiry = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestTrustedProxiesHTTPS(t *testing.T) {
	trusted := upstream.TrustedProxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name   string
		remote string
		proto  string
		tls    bool
		want   bool
	}{
		{"trusted proxy says https", "10.1.2.3:5000", "https", false, true},
		{"trusted IPv6 proxy says https", "[::1]:5000", "HTTPS", false, true},
		{"trusted proxy says http", "10.1.2.3:5000", "http", false, false},
		{"untrusted peer says https", "203.0.113.1:5000", "https", false, false},
		{"own TLS", "203.0.113.1:5000", "", true, true},
		{"garbage address", "nonsense", "https", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := trusted.HTTPS(r); got != tt.want {
				t.Fatalf("HTTPS = %v, want %v", got, tt.want)
			}
		})
	}
	if upstream.TrustedProxies(nil).Trusts(httptest.NewRequest(http.MethodGet, "/", nil)) {
		t.Fatal("an empty list trusts someone")
	}
}
