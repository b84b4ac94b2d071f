package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
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
