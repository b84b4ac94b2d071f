package dbtest_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
)

// readThroughPool is the defect the guard is for: a read through the pool
// by code inside a transaction.
func readThroughPool(ctx context.Context, db *bun.DB) error {
	var n int
	return db.NewSelect().ColumnExpr("1").Scan(ctx, &n)
}

func TestPoolGuardNamesTheCallerOfAReadThroughThePoolInATransaction(t *testing.T) {
	var mu sync.Mutex
	var reported []error
	db := dbtest.SQLiteReporting(t, func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	})
	start := time.Now()
	err := db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		return readThroughPool(ctx, db)
	})
	if err == nil {
		t.Fatal("a read through the pool inside a transaction succeeded on SQLite's one connection")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the read failed with %v, want the guard's cancellation", err)
	}
	if took := time.Since(start); took > dbtest.PoolWait+3*time.Second {
		t.Errorf("the read took %s to fail, want about %s", took, dbtest.PoolWait)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 {
		t.Fatalf("the guard reported %d findings, want 1: %v", len(reported), reported)
	}
	msg := reported[0].Error()
	for _, want := range []string{
		dbtest.ErrPoolWait.Error(),
		"SELECT 1",
		"portal/engine/dbtest_test.readThroughPool",
		"poolguard_test.go:",
		"begun by:\n  portal/engine/dbtest_test.TestPoolGuardNamesTheCallerOfAReadThroughThePoolInATransaction",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the guard's report lacks %q:\n%s", want, msg)
		}
	}
	// The connection is free again: the database works on.
	if err := readThroughPool(context.Background(), db); err != nil {
		t.Errorf("after the guard's finding: %v", err)
	}
}

func TestPoolGuardCatchesATransactionBegunOnThePoolInATransaction(t *testing.T) {
	var mu sync.Mutex
	var reported []error
	db := dbtest.SQLiteReporting(t, func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	})
	err := db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return nil })
	})
	if err == nil {
		t.Fatal("a transaction begun on the pool inside a transaction succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "statement: BEGIN") {
		t.Fatalf("the guard reported %v, want the nested BEGIN", reported)
	}
}

// recordingT is a test whose failures and clean-ups the guard's test sees.
type recordingT struct {
	*testing.T
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recordingT) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingT) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func (r *recordingT) cleanUp() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestSQLiteFailsTheTestThatReadThroughThePoolInATransaction(t *testing.T) {
	rt := &recordingT{T: t}
	db := dbtest.SQLite(rt)
	_ = db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		readThroughPool(ctx, db) // the error swallowed, as careless code would
		return nil
	})
	rt.cleanUp()
	if len(rt.errors) != 1 || !strings.Contains(rt.errors[0], "dbtest_test.readThroughPool") {
		t.Fatalf("the test's failures are %q, want one naming readThroughPool", rt.errors)
	}
}

func TestPoolGuardLetsStatementsQueueAndTransactionsUseTheirConnection(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				errs <- db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					var n int
					if err := tx.NewSelect().ColumnExpr("1").Scan(ctx, &n); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, "SELECT 2")
					return err
				})
				var n int
				errs <- db.NewSelect().ColumnExpr("1").Scan(ctx, &n)
			}
		}()
	}
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestGuardOpenDBGuardsTheDatabasesOpenDBOpens(t *testing.T) {
	var mu sync.Mutex
	var reported []error
	restore := dbtest.GuardOpenDB(func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	})
	db, err := engine.OpenDB("sqlite:" + filepath.Join(t.TempDir(), "command.db"))
	restore()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.RunInTx(context.Background(), nil, func(ctx context.Context, tx bun.Tx) error {
		return readThroughPool(ctx, db)
	}); err == nil {
		t.Fatal("a read through the pool inside a transaction succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "dbtest_test.readThroughPool") {
		t.Fatalf("the guard reported %v, want the read naming readThroughPool", reported)
	}
	// Restored: OpenDB opens unguarded again.
	if old := engine.SetSQLiteOpener(nil); old != nil {
		t.Error("OpenDB still guards after restore")
	}
}
