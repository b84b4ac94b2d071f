package oidc

import (
	"net/url"
	"strings"
)

// maxReturnPath bounds the address kept through a login.
const maxReturnPath = 2048

// SafeReturnPath reports whether raw may be the address a login returns to,
// and returns it. Only a relative path on this site passes: it starts with
// one "/", and has no second "/" or "\" after it (browsers read "//x" and
// "/\x" as another host), no scheme, no percent-encoding (nothing can hide
// behind an escape that a later decode turns into one of the above), no
// control characters, spaces or non-ASCII (browsers drop tabs and newlines,
// turning "/\t/evil" into "//evil"), and no fragment.
func SafeReturnPath(raw string) (string, bool) {
	if len(raw) == 0 || len(raw) > maxReturnPath || raw[0] != '/' {
		return "", false
	}
	if len(raw) > 1 && (raw[1] == '/' || raw[1] == '\\') {
		return "", false
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c <= 0x20 || c >= 0x7f || c == '\\' || c == '%' || c == '#' {
			return "", false
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "", false
	}
	return raw, true
}

// ReturnPathOr returns raw when it is a safe return path, else fallback.
func ReturnPathOr(raw, fallback string) string {
	if p, ok := SafeReturnPath(raw); ok {
		return p
	}
	return fallback
}
