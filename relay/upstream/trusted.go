package upstream

import (
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the peers in front of the gateway whose X-Forwarded-*
// headers are believed (PORTAL_TRUSTED_PROXIES). It is the gateway's one
// answer to "may this request's forwarding headers be believed?": the
// relay extends them rather than replacing them, HSTS and the session
// cookie's Secure flag follow X-Forwarded-Proto, the served OpenAPI
// document follows X-Forwarded-Prefix, and the request log takes the
// client address and request id from them. Empty trusts nobody.
type TrustedProxies []netip.Prefix

// Trusts reports whether r's direct peer, never an address a header
// names, is one of the trusted proxies.
func (t TrustedProxies) Trusts(r *http.Request) bool {
	if len(t) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// HTTPS reports whether r came over https: its own TLS, or
// X-Forwarded-Proto: https from a trusted proxy. Headers from anyone else
// are ignored.
func (t TrustedProxies) HTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return t.Trusts(r) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}
