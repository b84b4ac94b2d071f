package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/handlers/server"
)

const fixtures = "contract/testdata/"

// runSpec runs `portal spec ...` as main would and returns the exit status.
func runSpec(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"spec"}, args...), func(string) string { return "" }, &out, &errOut)
	if err != nil {
		status = exitCode(err)
		errOut.WriteString("portal: " + err.Error() + "\n")
	}
	return status, out.String(), errOut.String()
}

func TestSpecExitStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close) // after the parallel subtests
	models := fixtures + "admin-backend.models"
	backend := fixtures + "admin-backend.yaml"

	dir := t.TempDir()
	changed, err := os.ReadFile(backend)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "moved.yaml")
	if err := os.WriteFile(moved, bytes.Replace(changed, []byte("  /api/orders/{id}/refunds:\n"), []byte("  /api/orders/{id}/refund-requests:\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		args   []string
		status int
		say    string // in stdout or stderr
	}{
		{"check: clean", []string{"check", "--spec", backend, "--models", models}, 0, "result: 0 errors, 0 warnings"},
		{"check: unlisted model", []string{"check", "--spec", backend, "--models", "OrderDTO"}, 1, "OrderDTO.lines[] -> OrderLineDTO.product -> ProductDTO"},
		{"check: unknown model", []string{"check", "--spec", backend, "--models", "OrderDto"}, 1, "OrderDto is not a component schema of the description: it generates nothing (did you mean OrderDTO?)"},
		{"check: dangling ref", []string{"check", "--spec", fixtures + "dangling-ref-deep.yaml", "--models", "ProductDTO,MoneyDTO", "--min-paths", "1"}, 1, "ProductDTO.supplier -> SupplierDTO"},
		{"check: 29 paths warns", []string{"check", "--spec", fixtures + "extraction-29-paths.json", "--models", models}, 0, "29 paths, fewer than 30"},
		{"check: 29 paths, strict", []string{"check", "--strict", "--spec", fixtures + "extraction-29-paths.json", "--models", models}, 1, "few-paths"},
		{"check: missing generated file", []string{"check", "--spec", backend, "--models", "MoneyDTO", "--generated", dir}, 1, "MoneyDTO produced no file"},
		{"check: generated folder missing", []string{"check", "--spec", backend, "--models", "MoneyDTO", "--generated", filepath.Join(dir, "nope")}, 2, "generated folder"},
		{"check: api-docs off", []string{"check", "--spec", srv.URL + "/v3/api-docs", "--models", "OrderDTO"}, 2, "api-docs switch is probably off"},
		{"check: no such file", []string{"check", "--spec", filepath.Join(dir, "nope.json"), "--models", "OrderDTO"}, 2, "no such file"},
		{"check: --spec missing", []string{"check", "--models", "OrderDTO"}, 2, "--spec FILE|URL is required"},
		{"check: --models missing", []string{"check", "--spec", backend}, 2, "--models FILE|LIST is required"},
		{"check: models file missing", []string{"check", "--spec", backend, "--models", "models.txt"}, 2, "no such file"},
		{"check: bad pattern", []string{"check", "--spec", backend, "--models", "OrderDTO", "--file-pattern", "models/x.ts"}, 2, "{name} or {Name}"},
		{"check: bad format", []string{"check", "--spec", backend, "--models", "OrderDTO", "--format", "xml"}, 2, "want text or json"},
		{"check: unknown flag", []string{"check", "--nope"}, 2, "flag provided but not defined"},
		{"lint: clean", []string{"lint", backend}, 0, "83 operations, 83 requiring a security scheme"},
		{"lint: findings", []string{"lint", fixtures + "error-contract-broken.yaml"}, 1, "DELETE /api/events/{id} publishes 200 and no 204"},
		{"lint: two files", []string{"lint", backend, backend}, 2, "usage: portal spec lint"},
		{"diff: identical", []string{"diff", backend, backend}, 0, "no change to the contract"},
		{"diff: breaking", []string{"diff", backend, moved}, 1, "breaking changes: 1"},
		{"diff: breaking allowed, flag after the files", []string{"diff", backend, moved, "--allow-breaking"}, 0, "api path removed without deprecation"},
		{"diff: bump required and missing", []string{"diff", "--allow-breaking", "--require-bump", backend, moved}, 1, "not enough: the changes call for a major bump (3.0.0 or later)"},
		{"diff: one file", []string{"diff", backend}, 2, "usage: portal spec diff"},
		{"diff: unresolved", []string{"diff", fixtures + "dangling-ref-deep.yaml", backend}, 2, "SupplierDTO"},
		{"export: extra argument", []string{"export", "x"}, 2, "takes no arguments"},
		{"no command", nil, 2, "usage: portal spec"},
		{"unknown command", []string{"validate"}, 2, `unknown command "validate"`},
		{"help", []string{"check", "-h"}, 0, "flags of portal spec check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, stdout, stderr := runSpec(t, tt.args...)
			if status != tt.status {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", status, tt.status, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.say) {
				t.Errorf("output does not say %q\nstdout: %s\nstderr: %s", tt.say, stdout, stderr)
			}
		})
	}
}

func TestSpecJSONOutput(t *testing.T) {
	status, stdout, _ := runSpec(t, "check", "--format", "json", "--spec", fixtures+"admin-backend.yaml", "--models", "OrderDTO")
	if status != 1 {
		t.Fatalf("exit status %d", status)
	}
	var report struct {
		Paths    int `json:"paths"`
		Errors   int `json:"errors"`
		Findings []struct {
			Rule  string   `json:"rule"`
			Model string   `json:"model"`
			Chain []string `json:"chain"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if report.Paths != 53 || report.Errors != 15 || len(report.Findings) != 15 || report.Findings[0].Rule != "unlisted-model" {
		t.Errorf("report %+v", report)
	}

	status, stdout, _ = runSpec(t, "lint", "--format", "json", fixtures+"error-contract-broken.yaml")
	var lint struct {
		Summary struct {
			Deletes200 int `json:"deletesPublishing200"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &lint); status != 1 || err != nil || lint.Summary.Deletes200 != 2 {
		t.Errorf("lint JSON: status %d, %v, %+v", status, err, lint)
	}
}

// The export is the document /api/openapi.json serves, and it passes its
// own checks with every component schema listed.
func TestSpecExport(t *testing.T) {
	status, stdout, stderr := runSpec(t, "export")
	if status != 0 || stdout != string(server.OpenAPIDocument) {
		t.Fatalf("export: status %d, %d bytes (want %d), stderr %s", status, len(stdout), len(server.OpenAPIDocument), stderr)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var models []string
	for name := range doc.Components.Schemas {
		models = append(models, name)
	}
	if status, out, errOut := runSpec(t, "check", "--spec", file, "--models", strings.Join(models, ","), "--min-paths", "7", "--strict"); status != 0 {
		t.Errorf("check of the export: status %d\n%s%s", status, out, errOut)
	}
	if status, out, errOut := runSpec(t, "lint", file); status != 0 {
		t.Errorf("lint of the export: status %d\n%s%s", status, out, errOut)
	}
}
