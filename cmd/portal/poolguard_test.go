package main

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"portal/engine/dbtest"
)

// TestMain guards the SQLite databases the commands open themselves
// (dbtest.GuardOpenDB): a statement of a command or of serve that waits
// for the connection its own transaction holds fails the package, naming
// its caller, instead of hanging it.
func TestMain(m *testing.M) {
	var mu sync.Mutex
	var stuck []error
	restore := dbtest.GuardOpenDB(func(err error) {
		fmt.Fprintln(os.Stderr, err)
		mu.Lock()
		stuck = append(stuck, err)
		mu.Unlock()
	})
	code := m.Run()
	restore()
	mu.Lock()
	defer mu.Unlock()
	if len(stuck) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d statements waited for SQLite's one connection, held by their own transaction (above)\n", len(stuck))
		code = 1
	}
	os.Exit(code)
}
