package handlers_test

import (
	"slices"
	"testing"

	"portal/handlers"
	"portal/handlers/server"
)

// The reserved prefixes come from the router: optional routes count, the
// relay's own do not.
func TestReservedPrefixes(t *testing.T) {
	got := handlers.ReservedPrefixes()
	for _, want := range []string{"/api", "/static", "/membership", server.LoginPath, "/oauth2", server.LogoutPath, server.MetricsPath, "/dev", "/healthz"} {
		if !slices.Contains(got, want) {
			t.Errorf("ReservedPrefixes() = %q, lacks %s", got, want)
		}
	}
	if slices.Contains(got, "/services") {
		t.Errorf("ReservedPrefixes() = %q reserves the relay's default prefix", got)
	}
}
