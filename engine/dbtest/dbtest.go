// Package dbtest gives tests a migrated database: always SQLite, and
// PostgreSQL too when PORTAL_TEST_DATABASE_URL is set, each test on a fresh
// schema (PostgreSQL) or a fresh file (SQLite).
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/migrations"
)

// EnvPostgres names the variable with the PostgreSQL URL for tests.
const EnvPostgres = "PORTAL_TEST_DATABASE_URL"

var skipOnce sync.Once

// SkipWithoutPostgres skips the test, saying so plainly, when
// PORTAL_TEST_DATABASE_URL is not set.
func SkipWithoutPostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvPostgres) == "" {
		t.Skipf("PostgreSQL was skipped: set %s", EnvPostgres)
	}
}

// Each runs fn once per available database as subtests "sqlite" and "postgres".
func Each(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	if os.Getenv(EnvPostgres) == "" {
		skipOnce.Do(func() {
			fmt.Fprintf(os.Stderr, "dbtest: PostgreSQL was skipped: set %s to run the PostgreSQL suites\n", EnvPostgres)
		})
		return
	}
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLite returns a migrated database in a fresh file, guarded: a statement
// that waits longer than PoolWait for the one connection (code inside a
// transaction using the pool, which on SQLite waits forever) is cancelled
// and fails the test, naming its caller.
func SQLite(t testing.TB) *bun.DB {
	t.Helper()
	return SQLiteReporting(t, failAtCleanup(t))
}

// failAtCleanup returns a report of the guard that fails t when it is
// cleaned up: the guard's timer may fire after the test ended, and the
// statement's caller may well have swallowed its error. It also prints the
// finding at once, in case the test hangs on elsewhere.
func failAtCleanup(t testing.TB) func(error) {
	var mu sync.Mutex
	var stuck []error
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, err := range stuck {
			t.Errorf("%v", err)
		}
	})
	return func(err error) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name(), err)
		mu.Lock()
		stuck = append(stuck, err)
		mu.Unlock()
	}
}

// SQLiteReporting is SQLite with the guard's findings going to report
// instead of failing the test (the guard's own tests).
func SQLiteReporting(t testing.TB, report func(error)) *bun.DB {
	t.Helper()
	template, err := migratedSQLite()
	if err != nil {
		t.Fatalf("migrate the SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	if err := os.WriteFile(path, template, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := guardSQLite("sqlite:"+path, PoolWait, report)
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db) // finds nothing to do: the copy is current
}

// sqliteTemplate is a freshly migrated SQLite database file, made once per
// test binary: each test's database is a copy of it, which is what
// migrating a fresh file gives, without the second that migrating takes
// under -race (a suite makes over a thousand of them).
var sqliteTemplate struct {
	once  sync.Once
	bytes []byte
	err   error
}

func migratedSQLite() ([]byte, error) {
	sqliteTemplate.once.Do(func() {
		sqliteTemplate.bytes, sqliteTemplate.err = migrateSQLiteFile()
	})
	return sqliteTemplate.bytes, sqliteTemplate.err
}

// migrateSQLiteFile migrates a new file and returns its content, with
// everything checkpointed from the write-ahead log into the file.
func migrateSQLiteFile() ([]byte, error) {
	dir, err := os.MkdirTemp("", "portal-dbtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	db, err := engine.OpenDB("sqlite:" + path)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	_, err = migrations.Up(ctx, db)
	if err == nil {
		_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// Postgres returns a migrated database on a fresh schema, dropped at cleanup.
// It skips the test, saying so, when PORTAL_TEST_DATABASE_URL is not set:
// a fresh clone's `make test` runs what the machine offers (make test finds
// the local PostgreSQL and sets the variable; CI requires it).
func Postgres(t testing.TB) *bun.DB {
	t.Helper()
	return PostgresVia(t, "")
}

// PostgresVia is Postgres with the test's connections going to hostPort
// instead of the URL's host (a forwarder a test can cut to simulate an
// outage); the schema is created and dropped over a direct connection.
// An empty hostPort connects directly.
func PostgresVia(t testing.TB, hostPort string) *bun.DB {
	t.Helper()
	url, _ := EmptyPostgresSchema(t, hostPort)
	return open(t, url)
}

// EmptyPostgresSchema creates a fresh, empty schema, dropped at cleanup,
// and returns the address that connects to it (through hostPort when not
// empty) and its name: for tests that migrate it themselves, or hand it to
// the portal's own commands. It skips the test without PostgreSQL, as
// Postgres does.
func EmptyPostgresSchema(t testing.TB, hostPort string) (url, schema string) {
	t.Helper()
	SkipWithoutPostgres(t)
	base := os.Getenv(EnvPostgres)
	b := make([]byte, 6)
	rand.Read(b)
	schema = "t_" + hex.EncodeToString(b)
	admin, err := engine.OpenDB(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema (is PostgreSQL at %s running?): %v", base, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	if hostPort != "" {
		u.Host = hostPort
	}
	q := u.Query()
	q.Set("search_path", schema)
	if hostPort == "" && q.Get("read_timeout") == "" {
		// The suite's parallel tests under the race detector on a small
		// machine can keep one statement waiting longer than the driver's
		// 10 s default read timeout (a flaky "i/o timeout"); each test is
		// bounded by its own deadlines instead. A test through a forwarder
		// keeps the default: it may cut the line to see the timeout.
		q.Set("read_timeout", "30s")
	}
	u.RawQuery = q.Encode()
	return u.String(), schema
}

// GuardOpenDB makes engine.OpenDB open its SQLite databases guarded as
// SQLite's are, until report is replaced again by the returned restore: for
// tests whose databases the code under test opens itself (the portal
// commands). Guard findings go to report.
func GuardOpenDB(report func(error)) (restore func()) {
	old := engine.SetSQLiteOpener(func(url string) (*bun.DB, error) { return guardSQLite(url, PoolWait, report) })
	return func() { engine.SetSQLiteOpener(old) }
}

func open(t testing.TB, url string) *bun.DB {
	t.Helper()
	db, err := engine.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db)
}

func migrated(t testing.TB, db *bun.DB) *bun.DB {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Up(context.Background(), db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}
