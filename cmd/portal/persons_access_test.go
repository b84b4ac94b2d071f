package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"portal/engine"
	"portal/engine/privacy"
)

// `portal persons export` is in the access log (issue 30): the second
// export of a person lists the first, taken by the command line.
func TestPersonsExportIsInTheAccessLog(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatal(err)
	}
	var x struct {
		AccessLog []struct {
			Actor, Kind, RecordID string
		} `json:"accessLog"`
	}
	for want := range 2 {
		out, err := runCmd(t, e, "persons", "export", "--org", "1", "4")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &x); err != nil || len(x.AccessLog) != want {
			t.Fatalf("export %d: %v, access log %+v", want+1, err, x.AccessLog)
		}
	}
	if a := x.AccessLog[0]; a.Actor != "command line" || a.Kind != "export" || a.RecordID != "4" {
		t.Fatalf("access log entry %+v", a)
	}
}

// `portal export` is in the access log: one export entry per run, as the
// command line, naming the period, the kind and the format; a refused
// export (an unknown period) writes none.
func TestPeriodExportCommandIsInTheAccessLog(t *testing.T) {
	dir := t.TempDir()
	e := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(dir, "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef")
	if _, err := runCmd(t, e, "seed", "demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, e, "export", "--org", "1", "--period", "1", "registrations"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, e, "export", "--org", "1", "--period", "1", "payments", "--json"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, e, "export", "--org", "1", "--period", "999", "payments"); err == nil {
		t.Fatal("an unknown period exported")
	}
	db, err := engine.OpenDB("sqlite:" + filepath.Join(dir, "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var reads []privacy.AccessEntry
	if err := db.NewSelect().Model(&reads).Where("kind = ?", privacy.AccessExport).Order("id").Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(reads) != 2 || reads[0].RecordID != "periods/1/export/registrations" || reads[1].RecordID != "periods/1/export/payments?format=json" ||
		reads[0].Actor != "command line" || reads[0].OrganisationID != 1 {
		t.Fatalf("access log of the exports: %+v", reads)
	}
}
