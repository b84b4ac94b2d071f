package handlers_test

import (
	"slices"
	"testing"

	"portal/handlers"
)

// The reserved prefixes come from the router: optional routes count, the
// relay's own do not.
func TestReservedPrefixes(t *testing.T) {
	got := handlers.ReservedPrefixes()
	for _, want := range []string{"/api", "/static", "/membership", handlers.LoginPath, "/oauth2", handlers.LogoutPath, handlers.MetricsPath, "/dev", "/healthz"} {
		if !slices.Contains(got, want) {
			t.Errorf("ReservedPrefixes() = %q, lacks %s", got, want)
		}
	}
	if slices.Contains(got, "/services") {
		t.Errorf("ReservedPrefixes() = %q reserves the relay's default prefix", got)
	}
}
