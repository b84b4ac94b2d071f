package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"portal/cmd/internal/portalbin"
)

// asMain makes the test binary run loadgen itself, so that a test can run the
// benchmark as make bench does: its own process, its own flags and output.
const asMain = "LOADGEN_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	portalbin.Remove()
	os.Exit(code)
}

// TestBenchmarkRuns runs make bench's program in miniature on SQLite (two
// members, one flow each, a second of step loop and page loads, and the
// reference transaction) against a portal built from this checkout, and reads
// its report: the benchmark must not rot between the runs that record its
// figures.
func TestBenchmarkRuns(t *testing.T) {
	portal := portalbin.Build(t)
	cmd := exec.Command(os.Args[0], "-portal", portal, "-sqlite", "-members", "2", "-flows", "1",
		"-steps", "1s", "-pages", "1s", "-reference", "1s")
	cmd.Env = append(os.Environ(), asMain+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("loadgen: %v\n%s", err, out)
	}
	report := string(out)
	figure := func(pattern string) int {
		t.Helper()
		m := regexp.MustCompile(`(?m)` + pattern).FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("no %q in the report:\n%s", pattern, report)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if n := figure(`^flows completed\s+(\d+) in`); n != 2 {
		t.Errorf("flows completed = %d, want 2 (two members, one flow each)", n)
	}
	if n := figure(`^next requests\s+(\d+)$`); n < 2*3 {
		t.Errorf("next requests = %d, want at least a selection, a question and a commit per flow", n)
	}
	if n := figure(`^step loop: next/s\s+(\d+) `); n == 0 {
		t.Error("the step loop answered nothing")
	}
	if n := figure(`^step page loads\s+(\d+),`); n == 0 {
		t.Error("no step page loaded")
	}
	if n := figure(`^reference\s+(\d+) tx/s`); n == 0 {
		t.Error("the reference ran no transaction")
	}
	figure(`^ratio step loop next/s : ref (\d+)\.\d+`)
}
