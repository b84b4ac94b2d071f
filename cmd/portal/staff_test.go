package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/relay/session"
)

// The staff commands end to end on a real (SQLite) database, and the demo
// seed's staff with their links.
func TestStaffCommands(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef")
	out, err := runCmd(t, e, "seed", "demo", "--tenants")
	if err != nil || !strings.Contains(out, "staff pages of Riverside Rowing Club: http://localhost:8080/staff (sign in as admin@riverside.example") ||
		!strings.Contains(out, "staff pages of Lakeside Tennis Club: http://127.0.0.1:8080/staff") {
		t.Fatalf("seed: %v %s", err, out)
	}
	if _, err := runCmd(t, e, "seed", "demo", "--tenants"); err != nil {
		t.Fatalf("seed is not idempotent: %v", err)
	}
	if out, err = runCmd(t, e, "staff", "add", "--org", "2", "--email", "Pat@Example.org", "--name", "Pat", "--role", "treasurer"); err != nil || !strings.Contains(out, "Pat <pat@example.org>, treasurer, organisation 2") {
		t.Fatalf("staff add: %v %s", err, out)
	}
	if _, err = runCmd(t, e, "staff", "add", "--org", "2", "--email", "pat@example.org", "--name", "Pat", "--role", "admin"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("staff add twice: %v", err)
	}
	if _, err = runCmd(t, e, "staff", "add", "--org", "2", "--email", "x@example.org", "--name", "X", "--role", "owner"); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("staff add with a bad role: %v", err)
	}
	if out, _ = runCmd(t, e, "staff", "list", "--org", "2"); !strings.Contains(out, "pat@example.org") || !strings.Contains(out, "admin@lakeside.example") || strings.Contains(out, "riverside") {
		t.Fatalf("staff list:\n%s", out)
	}
	if out, err = runCmd(t, e, "staff", "remove", "--org", "2", "--email", "pat@example.org"); err != nil || !strings.Contains(out, "removed") {
		t.Fatalf("staff remove: %v %s", err, out)
	}
	if _, err = runCmd(t, e, "staff", "remove", "--org", "2", "--email", "pat@example.org"); err == nil {
		t.Fatal("removed twice")
	}
	if _, err = runCmd(t, e, "staff", "list"); err == nil {
		t.Fatal("staff list without --org")
	}
}

// The development IdP starts only for a portal on a loopback address
// without an issuer of its own; elsewhere staff sign-in is off.
func TestStaffSignInWiring(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := session.NewDBStore(nil) // wiring only: nothing is stored
	cases := []struct {
		name, base, issuer string
		on                 bool
	}{
		{"loopback without issuer: development IdP", "http://localhost:8080", "", true},
		{"public address without issuer: off", "https://portal.example", "", false},
		{"private address without issuer: off", "http://192.168.1.10:8080", "", false},
		{"issuer configured", "https://portal.example", "https://idp.example", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Config{BaseURL: c.base, OIDCIssuer: c.issuer, OIDCClientID: "portal"}
			d, stop, err := staffSignIn(cfg, store, nil, engine.NewService(nil, nil), log)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if (d.Provider != nil) != c.on || d.Sessions == nil {
				t.Fatalf("provider on = %v, want %v", d.Provider != nil, c.on)
			}
		})
	}
}
