package migrations_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/migrations"
)

// lockClass is migrations' advisory lock class ("port"), written out here
// so that the test can hold a schema's lock as another instance would.
const lockClass = 0x706f7274

// freshSchema opens an empty schema of its own (dropped at cleanup) and
// returns it with its name.
func freshSchema(t *testing.T) (*bun.DB, string) {
	t.Helper()
	url, schema := dbtest.EmptyPostgresSchema(t, "")
	db, err := engine.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, schema
}

// Instances of one deployment starting together migrate once: of four
// concurrent Ups on one schema, one applies every migration and the others
// none, without an error.
func TestConcurrentUpsMigrateOnce(t *testing.T) {
	db, _ := freshSchema(t)
	var wg sync.WaitGroup
	applied := make([][]string, 4)
	errs := make([]error, 4)
	for i := range applied {
		wg.Go(func() { applied[i], errs[i] = migrations.Up(context.Background(), db) })
	}
	wg.Wait()
	total, seen := 0, map[string]bool{}
	for i, names := range applied {
		if errs[i] != nil {
			t.Fatalf("Up %d: %v", i, errs[i])
		}
		for _, n := range names {
			if seen[n] {
				t.Fatalf("%s applied twice", n)
			}
			seen[n] = true
		}
		total += len(names)
	}
	status, err := migrations.List(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(status) {
		t.Fatalf("%d migrations applied in all, want each of %d once", total, len(status))
	}
}

// The lock is per schema: while one schema's lock is held (another
// instance migrating it), a deployment in another schema of the same
// database migrates at once, and the held schema waits, ending with its
// context and a clear error rather than a driver read timeout.
func TestMigrationLockIsPerSchema(t *testing.T) {
	held, heldSchema := freshSchema(t)
	other, _ := freshSchema(t)
	ctx := context.Background()
	conn, err := held.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?, hashtext(?))", lockClass, heldSchema); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if names, err := migrations.Up(ctx, other); err != nil || len(names) == 0 {
		t.Fatalf("the other schema: %d migrations applied, %v", len(names), err)
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("the other schema waited %v", waited)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = migrations.Up(short, held)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another instance is migrating") {
		t.Fatalf("the held schema: %v, want a wait ended by its context", err)
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?, hashtext(?))", lockClass, heldSchema); err != nil {
		t.Fatal(err)
	}
	if names, err := migrations.Up(ctx, held); err != nil || len(names) == 0 {
		t.Fatalf("the held schema after the lock is released: %d migrations applied, %v", len(names), err)
	}
}
