package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `portal persons export` and `erase` end to end on a real (SQLite)
// database: the demo's Alex holds an active membership of last season's
// period only, Jamie one of the current period.
func TestPersonsExportAndErase(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, e, "persons", "export", "--org", "1", "4")
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Format  string `json:"format"`
		Persons []struct {
			FirstName string `json:"firstName"`
		} `json:"persons"`
		Memberships []any `json:"memberships"`
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil || x.Format != "portal-personal-data/1" || len(x.Persons) != 1 || x.Persons[0].FirstName != "Jamie" || len(x.Memberships) != 1 {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "persons", "export", "--org", "2", "4"); err == nil {
		t.Fatal("another organisation's person was exported")
	}
	if _, err := runCmd(t, e, "persons", "erase", "--org", "1", "4"); err == nil || !strings.Contains(err.Error(), "active membership") {
		t.Fatalf("erasure of an active member: %v", err)
	}
	if out, err = runCmd(t, e, "persons", "erase", "--org", "1", "--force", "4"); err != nil || !strings.Contains(out, `"forced": true`) {
		t.Fatalf("forced erasure: %v %s", err, out)
	}
	if out, _ = runCmd(t, e, "persons", "export", "--org", "1", "4"); strings.Contains(out, "Jamie") || !strings.Contains(out, `"lastName": "person 4"`) {
		t.Fatalf("export after the erasure:\n%s", out)
	}
}
