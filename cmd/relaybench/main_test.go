package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"portal/cmd/internal/portalbin"
)

// TestMain lets the test binary serve the benchmark's own child roles (the
// backend and the bare proxy), which run re-executes as itself with -serve.
func TestMain(m *testing.M) {
	for _, arg := range os.Args[1:] {
		if arg == "-serve" {
			if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
				os.Stderr.WriteString("relaybench child: " + err.Error() + "\n")
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	code := m.Run()
	portalbin.Remove()
	os.Exit(code)
}

// TestRelayBenchmarkRuns runs make bench-relay's program in miniature (one
// short round, SQLite only) against a portal built from this checkout, so the
// benchmark cannot rot unnoticed between the runs that record its figures.
func TestRelayBenchmarkRuns(t *testing.T) {
	portal := portalbin.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"-portal", portal, "-rounds", "1", "-duration", "300ms", "-warmup", "50ms",
		"-concurrency", "2", "-database-url", "", "-redis-url", ""}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, row := range []string{"direct to the backend", bareRow, guestRow, "portal, SQLite (default), hash session, cached"} {
		line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(row) + `\s+(\d+)\s+\S+\s+\S+\s+(\d+)$`).FindStringSubmatch(out.String())
		if line == nil {
			t.Fatalf("no result row %q in:\n%s", row, out.String())
		}
		if line[1] == "0" {
			t.Errorf("%s: 0 requests/s", row)
		}
		if line[2] != "0" {
			t.Errorf("%s: %s errors", row, line[2])
		}
	}
	if !strings.Contains(out.String(), "throughput") {
		t.Errorf("no comparison with the bare proxy in:\n%s", out.String())
	}
}
