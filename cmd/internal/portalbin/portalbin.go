// Package portalbin builds the portal binary for tests that run it as its own
// process, as an operator or a benchmark does (cmd/loadgen, cmd/relaybench).
package portalbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	once  sync.Once
	dir   string
	built string
	err   error
	out   []byte
)

// Build returns the path of a portal binary built from this checkout, once per
// test binary (later calls reuse it). It fails the test when the build does.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		var root []byte
		if root, err = exec.Command("go", "env", "GOMOD").Output(); err != nil {
			return
		}
		if dir, err = os.MkdirTemp("", "portalbin-"); err != nil {
			return
		}
		built = filepath.Join(dir, "portal")
		build := exec.Command("go", "build", "-o", built, "./cmd/portal")
		build.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err = build.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("building the portal: %v\n%s", err, out)
	}
	return built
}

// Remove deletes the binary Build made; a test package's TestMain calls it
// after its tests.
func Remove() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
