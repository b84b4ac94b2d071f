package oidc_test

import (
	"net/url"
	"strings"
	"testing"

	"portal/relay/oidc"
)

func TestSafeReturnPath(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		ok   bool
	}{
		{"root", "/", true},
		{"path", "/membership/register/1", true},
		{"path and query", "/services/admin-service/api/events?page=2&size=10", true},
		{"colon in path", "/a:b", true},
		{"empty", "", false},
		{"relative", "membership", false},
		{"protocol relative", "//evil.example", false},
		{"protocol relative path", "//evil.example/x", false},
		{"backslash", `/\evil.example`, false},
		{"backslash later", `/a\b`, false},
		{"scheme", "https://evil.example/", false},
		{"javascript", "javascript:alert(1)", false},
		{"scheme after slash trick", "/https://evil.example", true}, // a path on this site
		{"encoded slash", "/%2Fevil.example", false},
		{"encoded backslash", "/%5Cevil.example", false},
		{"double encoded", "/%252F%252Fevil.example", false},
		{"tab", "/\t/evil.example", false},
		{"newline", "/\n/evil.example", false},
		{"carriage return", "/x\r\nSet-Cookie: a=b", false},
		{"nul", "/\x00", false},
		{"space", "/ /evil.example", false},
		{"del", "/\x7f", false},
		{"non-ASCII", "/ｅvil", false},
		{"fragment", "/#//evil.example", false},
		{"user info", "/@evil.example", true}, // still a path: "/@evil.example" on this host
		{"too long", "/" + strings.Repeat("a", 2048), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := oidc.SafeReturnPath(tt.raw)
			if ok != tt.ok {
				t.Fatalf("SafeReturnPath(%q) ok = %v, want %v", tt.raw, ok, tt.ok)
			}
			if ok && got != tt.raw {
				t.Fatalf("SafeReturnPath(%q) = %q, want it unchanged", tt.raw, got)
			}
			if !ok && got != "" {
				t.Fatalf("SafeReturnPath(%q) = %q on refusal, want empty", tt.raw, got)
			}
		})
	}
	if got := oidc.ReturnPathOr("//evil.example", "/"); got != "/" {
		t.Fatalf("ReturnPathOr fallback = %q", got)
	}
}

// FuzzSafeReturnPath checks that whatever passes stays on this site however
// it is read: by Go's URL resolution against the site, and by the lenient
// rules of browsers (which drop tabs and newlines and treat "\" as "/").
func FuzzSafeReturnPath(f *testing.F) {
	for _, seed := range []string{"/", "/a/b?c=d", "//evil", `/\evil`, "/%2f%2fevil", "https://evil", "/\t/evil",
		"/.//evil", "/a/../..//evil", "///evil", "/?next=//evil", "/;//evil", "/@evil", "/\u3002evil"} {
		f.Add(seed)
	}
	base, _ := url.Parse("https://portal.example/some/page")
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := oidc.SafeReturnPath(raw)
		if !ok {
			return
		}
		if got != raw {
			t.Fatalf("accepted %q but returned %q", raw, got)
		}
		for _, variant := range []string{
			got,
			strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(got),
			strings.ReplaceAll(got, `\`, "/"),
		} {
			u, err := url.Parse(variant)
			if err != nil {
				t.Fatalf("accepted %q, which does not parse: %v", raw, err)
			}
			res := base.ResolveReference(u)
			if res.Scheme != "https" || res.Host != "portal.example" || res.User != nil {
				t.Fatalf("accepted %q, which leads to %q", raw, res)
			}
		}
		if strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\%#\t\r\n ") {
			t.Fatalf("accepted %q", raw)
		}
		if dec, err := url.PathUnescape(got); err != nil || dec != got {
			t.Fatalf("accepted %q, which decodes to something else", raw)
		}
	})
}
