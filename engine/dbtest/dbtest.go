// Package dbtest gives tests a migrated database: always SQLite, and
// PostgreSQL too when PORTAL_TEST_DATABASE_URL is set, each test on a
// database of its own (PostgreSQL: a copy of a template database) or a
// fresh file (SQLite).
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

// Postgres returns a migrated database of its own, dropped at cleanup: a
// copy of a template database migrated once (see postgresTemplate), or, where
// the test user may not create databases, a fresh schema migrated for the
// test. It skips the test, saying so, when PORTAL_TEST_DATABASE_URL is not
// set: a fresh clone's `make test` runs what the machine offers (make test
// finds the local PostgreSQL and sets the variable; CI requires it).
func Postgres(t testing.TB) *bun.DB {
	t.Helper()
	return PostgresVia(t, "")
}

// PostgresVia is Postgres with the test's connections going to hostPort
// instead of the URL's host (a forwarder a test can cut to simulate an
// outage); the database is created and dropped over a direct connection.
// An empty hostPort connects directly.
func PostgresVia(t testing.TB, hostPort string) *bun.DB {
	t.Helper()
	SkipWithoutPostgres(t)
	if url, ok := postgresCopy(t, hostPort); ok {
		return open(t, url) // finds nothing to do: the copy is current
	}
	url, _ := EmptyPostgresSchema(t, hostPort)
	return open(t, url)
}

// postgresCopy creates a database from the template, dropped at cleanup,
// and returns its address (through hostPort when not empty). It reports
// false, having said why once, when there is no template.
func postgresCopy(t testing.TB, hostPort string) (string, bool) {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	template, err := postgresTemplate(base)
	if err != nil {
		templateSkip.Do(func() {
			fmt.Fprintf(os.Stderr, "dbtest: each PostgreSQL test migrates a schema of its own: no template database (%v)\n", err)
		})
		return "", false
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "portal_test_" + hex.EncodeToString(b)
	admin, err := engine.OpenDB(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + template); err != nil {
		admin.Close()
		t.Fatalf("create a database from the template %s: %v", template, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		admin.Close()
	})
	return testURL(t, base, hostPort, func(u *neturl.URL) { u.Path = "/" + name }), true
}

var templateSkip sync.Once

// postgresTemplate is the name of a database migrated once for the tests
// of every test binary that runs against base's server with the current
// migrations, made by the first to need it: each test's database is a
// copy of it (CREATE DATABASE … TEMPLATE), which is what migrating a fresh
// schema gives without the half second that takes (a suite makes hundreds).
// Its name holds the migrations' digest, so a changed migration makes a new
// one; a finished template accepts no connections, which both marks it
// finished and keeps it copyable (PostgreSQL copies no database in use).
func postgresTemplate(base string) (string, error) {
	pgTemplate.once.Do(func() { pgTemplate.name, pgTemplate.err = makePostgresTemplate(base) })
	return pgTemplate.name, pgTemplate.err
}

var pgTemplate struct {
	once sync.Once
	name string
	err  error
}

// templatePrefix begins the name of every template database of the tests.
const templatePrefix = "portal_test_template_"

func makePostgresTemplate(base string) (string, error) {
	ctx := context.Background()
	admin, err := engine.OpenDB(base)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	digest, err := migrations.Digest(admin)
	if err != nil {
		return "", err
	}
	name := templatePrefix + digest[:16]
	// One connection holds the lock while the template is made: test
	// binaries running side by side make it once.
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext(?))", templatePrefix); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext(?))", templatePrefix) //nolint:errcheck // the session end releases it anyway
	var open []bool
	if err := conn.NewSelect().Table("pg_database").Column("datallowconn").Where("datname = ?", name).Scan(ctx, &open); err != nil {
		return "", err
	}
	if len(open) == 1 && !open[0] {
		return name, nil
	}
	if len(open) == 1 { // unfinished: its maker stopped midway
		if _, err := conn.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return "", err
		}
	}
	// Templates of other migrations are dropped where nothing copies them.
	var old []string
	if err := conn.NewSelect().Table("pg_database").Column("datname").Where("datname LIKE ? AND datname <> ?", templatePrefix+"%", name).Scan(ctx, &old); err != nil {
		return "", err
	}
	for _, o := range old {
		conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+o) //nolint:errcheck // in use by another checkout's tests: kept
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := neturl.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	db, err := engine.OpenDB(u.String())
	if err != nil {
		return "", err
	}
	_, err = migrations.Up(ctx, db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, "ALTER DATABASE "+name+" ALLOW_CONNECTIONS false")
	}
	if err != nil {
		conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") //nolint:errcheck // the next maker drops it
		return "", fmt.Errorf("migrate the template database: %w", err)
	}
	return name, nil
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
	return testURL(t, base, hostPort, func(u *neturl.URL) {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
	}), schema
}

// testURL is base with the test's database or schema set by at, connecting
// through hostPort when not empty.
func testURL(t testing.TB, base, hostPort string, at func(*neturl.URL)) string {
	t.Helper()
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	at(u)
	if hostPort != "" {
		u.Host = hostPort
	}
	q := u.Query()
	if hostPort == "" && q.Get("read_timeout") == "" {
		// The suite's parallel tests under the race detector on a small
		// machine can keep one statement waiting longer than the driver's
		// 10 s default read timeout (a flaky "i/o timeout"); each test is
		// bounded by its own deadlines instead. A test through a forwarder
		// keeps the default: it may cut the line to see the timeout.
		q.Set("read_timeout", "30s")
	}
	u.RawQuery = q.Encode()
	return u.String()
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
