package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The invite commands end to end on a real (SQLite) database.
func TestInviteCommands(t *testing.T) {
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	e := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_SESSION_KEY", strings.Repeat("ab", 32),
		"PORTAL_BASE_URL", "https://portal.example")
	if out, err := runCmd(t, e, "seed", "demo", "--members", "2"); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	noKey := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, noKey, "invite", "--org", "1", "--period", "1", "--all"); err == nil || !strings.Contains(err.Error(), "PORTAL_SESSION_KEY") {
		t.Fatalf("invite without a session key: %v", err)
	}
	if _, err := runCmd(t, e, "invite", "--org", "1", "--period", "1", "--all", "--expires", "1m"); err == nil || !strings.Contains(err.Error(), "expires") {
		t.Fatalf("a one-minute invitation: %v", err)
	}
	out, err := runCmd(t, e, "invite", "--org", "1", "--period", "1", "--user-keys", "demo", "--mail=false")
	if err != nil || !regexp.MustCompile(`https://portal\.example/invite/\d+\.\d+\.\S+`).MatchString(out) || !strings.Contains(out, "1 invitation(s) issued, 0 skipped") {
		t.Fatalf("invite demo: %v\n%s", err, out)
	}
	// Everyone: demo already holds a valid link, so only the two new households.
	if out, err = runCmd(t, e, "invite", "--org", "1", "--period", "1", "--all"); err != nil || !strings.Contains(out, "2 invitation(s) issued and queued for e-mail, 1 skipped") ||
		!strings.Contains(out, "skipped demo: already invited") {
		t.Fatalf("invite all: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "invite", "revoke", "--org", "1", "1"); err != nil || !strings.Contains(out, "revoked invitation 1") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if _, err = runCmd(t, e, "invite", "revoke", "--org", "2", "2"); err == nil {
		t.Fatal("revoked an invitation of another organisation")
	}
	if out, err = runCmd(t, e, "invite", "revoke", "--org", "1", "--period", "1", "--user-key", "demo-1"); err != nil || !strings.Contains(out, "revoked 1 invitation(s)") {
		t.Fatalf("revoke of a user key: %v %s", err, out)
	}
	out, err = runCmd(t, e, "invite", "list", "--org", "1", "--period", "1")
	if err != nil || strings.Count(out, "revoked") != 2 || !strings.Contains(out, "demo-2") || !strings.Contains(out, "Alex Morgan") {
		t.Fatalf("list: %v\n%s", err, out)
	}
}

func TestExportCommand(t *testing.T) {
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	e := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef")
	if out, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
	// The demo's Jamie holds an active membership of period 1 (renewal).
	out, err := runCmd(t, e, "export", "registrations", "--org", "1", "--period", "1")
	if err != nil || !strings.HasPrefix(out, "membershipId,registrationId,orderId,") || !strings.Contains(out, "Jamie,Morgan,2011-02-17") {
		t.Fatalf("export registrations: %v\n%s", err, out)
	}
	if out, err = runCmd(t, e, "export", "--org", "1", "--period", "1", "payments", "--json"); err != nil || strings.TrimSpace(out) != "[\n]" {
		t.Fatalf("export payments: %v %q", err, out)
	}
	if _, err = runCmd(t, e, "export", "registrations", "--org", "2", "--period", "1"); err == nil {
		t.Fatal("exported a period of another organisation")
	}
}
