package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The organisation commands end to end on a real (SQLite) database.
func TestOrganisationCommands(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef",
		"PORTAL_SESSION_KEY", strings.Repeat("ab", 32))
	out, err := runCmd(t, e, "seed", "demo", "--tenants")
	if err != nil || !strings.Contains(out, "http://127.0.0.1:8080/membership/register/3?u=demo&h=") || !strings.Contains(out, "http://localhost:8080/membership/register/1?u=demo&h=") {
		t.Fatalf("seed: %v %s", err, out)
	}
	if out, err = runCmd(t, e, "orgs", "create", "--name", "Hill Hockey", "--slug", "hill", "--hosts", "hill.example"); err != nil || !strings.Contains(out, "created organisation 3 (hill)") {
		t.Fatalf("orgs create: %v %s", err, out)
	}
	if _, err = runCmd(t, e, "orgs", "create", "--name", "Again", "--slug", "hill"); err == nil || !strings.Contains(err.Error(), "slug") {
		t.Fatalf("a taken slug: %v", err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("hill-hockey-own-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err = runCmd(t, e, "orgs", "set", "--org", "3", "--hash-secret-file", secret, "--accent", "#123abc"); err != nil {
		t.Fatal(err)
	}
	if out, _ = runCmd(t, e, "orgs", "list"); !strings.Contains(out, "hill.example") || !strings.Contains(out, "true") {
		t.Fatalf("orgs list:\n%s", out)
	}

	key, err := runCmd(t, e, "apikeys", "create", "--org", "3", "--scope", "write", "--name", "sync")
	if err != nil || !strings.HasPrefix(key, "ptl_") {
		t.Fatalf("apikeys create: %v %q", err, key)
	}
	if out, _ = runCmd(t, e, "apikeys", "list", "--org", "3"); !strings.Contains(out, key[:10]) || strings.Contains(out, strings.TrimSpace(key)) {
		t.Fatalf("apikeys list shows the prefix, never the key:\n%s", out)
	}
	if _, err = runCmd(t, e, "apikeys", "create", "--org", "3", "--scope", "admin", "--name", "x"); err == nil {
		t.Fatal("a key with scope admin was made")
	}

	csv := filepath.Join(dir, "members.csv")
	if err := os.WriteFile(csv, []byte("externalId,firstName,lastName,dateOfBirth,email,userKeys\nH1,Ann,Able,1980-01-01,,fam-1\nH2,Bob,Able,2015-05-05,,fam-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// As the issue writes it: the file before --org.
	if out, err = runCmd(t, e, "persons", "import", csv, "--org", "3"); err != nil || !strings.Contains(out, "2 created, 0 updated, 0 unchanged") {
		t.Fatalf("persons import: %v %s", err, out)
	}
	if out, _ = runCmd(t, e, "persons", "import", csv, "--org", "3"); !strings.Contains(out, "0 created, 0 updated, 2 unchanged") {
		t.Fatalf("persons import again: %s", out)
	}
	if out, err = runCmd(t, e, "persons", "unlink", "--org", "3", "H1", "fam-1"); err != nil || !strings.Contains(out, "1 link(s) removed") {
		t.Fatalf("persons unlink: %v %s", err, out)
	}
}
