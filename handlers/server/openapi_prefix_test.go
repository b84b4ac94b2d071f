package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"testing"

	"portal/handlers"
	"portal/handlers/server"
)

// TestOpenAPIServersBehindTrustedProxy: the served description's servers
// entry carries X-Forwarded-Prefix only when the direct peer is a trusted
// proxy; otherwise it is byte for byte the embedded document.
func TestOpenAPIServersBehindTrustedProxy(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	tests := []struct {
		name    string
		proxies []netip.Prefix
		peer    string
		prefix  string
		servers string // the servers url served; "" means the embedded bytes unchanged
	}{
		{"trusted proxy", proxies, "10.1.2.3:41000", "/portal", "/portal"},
		{"trusted proxy over IPv6", proxies, "[::1]:41000", "/clubs/riverside/", "/clubs/riverside"},
		{"trusted proxy, IPv4-mapped peer", proxies, "[::ffff:10.9.9.9]:41000", "/portal", "/portal"},
		{"untrusted peer", proxies, "192.0.2.7:41000", "/portal", ""},
		{"nobody trusted", nil, "10.1.2.3:41000", "/portal", ""},
		{"trusted proxy, no prefix", proxies, "10.1.2.3:41000", "", ""},
		{"trusted proxy, a prefix that is no path", proxies, "10.1.2.3:41000", "//evil.example/x", ""},
		{"trusted proxy, a list of prefixes", proxies, "10.1.2.3:41000", "/a,/b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := handlers.New(handlers.Deps{TrustedProxies: tt.proxies})
			req := httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil)
			req.RemoteAddr = tt.peer
			req.Header.Set("X-Forwarded-For", "10.1.2.3") // names a trusted address; must not count
			if tt.prefix != "" {
				req.Header.Set("X-Forwarded-Prefix", tt.prefix)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, body)
			}
			if got := rec.Header().Values("Vary"); !slices.Contains(got, "X-Forwarded-Prefix") {
				t.Errorf("Vary %q does not name X-Forwarded-Prefix", got)
			}
			if tt.servers == "" {
				if !bytes.Equal(body, server.OpenAPIDocument) {
					t.Errorf("the served document differs from the embedded one")
				}
				return
			}
			var doc struct {
				Servers []struct {
					URL string `json:"url"`
				} `json:"servers"`
			}
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.servers {
				t.Errorf("servers %+v, want one entry %q", doc.Servers, tt.servers)
			}
			// Only the url changed.
			if want := bytes.Replace(server.OpenAPIDocument, []byte(`"url": "/"`), []byte(`"url": "`+tt.servers+`"`), 1); !bytes.Equal(body, want) {
				t.Errorf("more than the servers url changed")
			}
		})
	}
}
