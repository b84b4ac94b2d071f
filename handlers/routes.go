package handlers

import (
	"slices"
	"strings"

	"portal/engine/payment"
	"portal/relay/upstream"
)

// ReservedPrefixes are the first path segments of the gateway's own routes
// ("/api", "/login", ...), which a relay prefix must not overlap. They are
// read from the router with every optional route on (the test payment
// gateway's, /metrics), so that a route added to New is reserved as it is
// added; the relay's own routes are left out.
func ReservedPrefixes() []string {
	e := New(Deps{Gateway: &payment.TestGateway{}})
	relay := "/" + strings.Trim(upstream.DefaultPrefix, "/")
	var out []string
	for _, r := range e.Routes() {
		if r.Path == relay || strings.HasPrefix(r.Path, relay+"/") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
		if first == "" || strings.ContainsAny(first, ":*") {
			continue // a route on "/" or a parameter reserves no prefix
		}
		if seg := "/" + first; !slices.Contains(out, seg) {
			out = append(out, seg)
		}
	}
	slices.Sort(out)
	return out
}
