// Package dbtest gives tests a migrated database: always SQLite, and
// PostgreSQL too when PORTAL_TEST_DATABASE_URL is set, each test on a fresh
// schema (PostgreSQL) or a fresh file (SQLite).
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
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

// SQLite returns a migrated database in a fresh file.
func SQLite(t testing.TB) *bun.DB {
	t.Helper()
	return open(t, "sqlite:"+filepath.Join(t.TempDir(), "test.db"))
}

// Postgres returns a migrated database on a fresh schema, dropped at cleanup.
// It fails the test when PORTAL_TEST_DATABASE_URL is not set.
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
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Fatalf("%s is not set", EnvPostgres)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
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
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	if hostPort != "" {
		u.Host = hostPort
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return open(t, u.String())
}

func open(t testing.TB, url string) *bun.DB {
	t.Helper()
	db, err := engine.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Up(context.Background(), db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}
