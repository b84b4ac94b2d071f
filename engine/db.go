package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// defaultMaxConns is the PostgreSQL pool's size unless SetMaxConns changes
// it: with 32 members answering at once, 8 connections left requests
// queueing for one while PostgreSQL waited for commits to reach the disk
// (docs/BENCHMARKS.md); a few instances of 16 stay well within PostgreSQL's
// default of 100 connections.
const defaultMaxConns = 16

// sqliteDriver is modernc.org/sqlite's own registration (the pure-Go driver
// sqliteshim would pick): the functions the engine registers with it
// (search_text.go) exist only on its connections, not on sqliteshim's
// driver value.
const sqliteDriver = "sqlite"

// OpenDB opens the database named by url: "postgres://..." (or "postgresql://")
// or "sqlite:PATH". SQLite runs with one connection, WAL and a busy timeout:
// one writer at a time is what SQLite supports anyway, and a single
// connection turns lock contention into queueing instead of SQLITE_BUSY.
//
// Another process may write the same file (the operator commands beside a
// serving portal), so a transaction that may write begins IMMEDIATE
// (_txlock): it takes the write lock at BEGIN, where a busy writer elsewhere
// is waited for (busy_timeout). A deferred transaction that read first
// fails at its first write with SQLITE_BUSY at once, whatever the timeout,
// when another process wrote since its read: SQLite cannot wait there, as
// the snapshot it read is already stale. Read-only transactions
// (sql.TxOptions.ReadOnly) stay deferred and never block a writer in WAL.
func OpenDB(url string) (*bun.DB, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		sqldb := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(url)))
		sqldb.SetMaxOpenConns(defaultMaxConns)
		sqldb.SetMaxIdleConns(defaultMaxConns)
		return bun.NewDB(sqldb, pgdialect.New()), nil
	case strings.HasPrefix(url, "sqlite:"):
		if open := sqliteOpener.Load(); open != nil {
			return (*open)(url)
		}
		return OpenSQLiteVia(url, nil)
	default:
		return nil, fmt.Errorf("database url must start with postgres:// or sqlite: (got scheme of %q)", schemeOf(url))
	}
}

// sqliteOpener, when set, opens OpenDB's SQLite databases: the command
// tests, which open their databases through the commands themselves, put
// dbtest's guard there (SetSQLiteOpener).
var sqliteOpener atomic.Pointer[func(url string) (*bun.DB, error)]

// SetSQLiteOpener makes OpenDB open SQLite databases with open (nil: as
// usual) and returns the opener it replaced. For tests: dbtest.GuardOpenDB.
func SetSQLiteOpener(open func(url string) (*bun.DB, error)) func(url string) (*bun.DB, error) {
	var p *func(string) (*bun.DB, error)
	if open != nil {
		p = &open
	}
	if old := sqliteOpener.Swap(p); old != nil {
		return *old
	}
	return nil
}

// OpenSQLiteVia opens the SQLite database of url ("sqlite:PATH") as OpenDB
// does, its connections made through wrap(the driver's connector) when wrap
// is not nil: the tests' guard (dbtest) sees there when a statement got the
// single connection.
func OpenSQLiteVia(url string, wrap func(driver.Connector) driver.Connector) (*bun.DB, error) {
	if !strings.HasPrefix(url, "sqlite:") {
		return nil, fmt.Errorf("database url must start with sqlite: (got scheme of %q)", schemeOf(url))
	}
	path := strings.TrimPrefix(url, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if path == "" {
		return nil, fmt.Errorf("database url %q: missing file path", "sqlite:")
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	// secure_delete: a deleted or replaced value is overwritten with zeros,
	// not left in the page's free space where a copy of the file shows it
	// (an erasure must leave nothing; docs/DATA-PROTECTION.md).
	dsn := "file:" + path + sep + "_pragma=foreign_keys(1)&_pragma=secure_delete(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=temp_store(2)&_time_format=sqlite&_txlock=immediate"
	// The registered driver itself, as sql.Open would use it.
	probe, err := sql.Open(sqliteDriver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite: %w", err)
	}
	var conn driver.Connector = dsnConnector{dsn: dsn, drv: probe.Driver()}
	probe.Close()
	if wrap != nil {
		conn = wrap(conn)
	}
	sqldb := sql.OpenDB(conn)
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0)
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}

// dsnConnector is what sql.Open makes of a driver without a connector of
// its own.
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

// SetMaxConns sets how many connections db opens at most on PostgreSQL
// (PORTAL_DATABASE_MAX_CONNS); SQLite keeps its one connection.
func SetMaxConns(db *bun.DB, n int) {
	if db.Dialect().Name() != dialect.PG || n < 1 {
		return
	}
	db.DB.SetMaxOpenConns(n)
	db.DB.SetMaxIdleConns(n)
}

func schemeOf(url string) string {
	if i := strings.Index(url, ":"); i > 0 {
		return url[:i]
	}
	return ""
}

// TruncateWAL moves what SQLite's write-ahead log holds into the database
// file and empties the log, so that an erased value's earlier page images
// do not stay readable in the WAL; on PostgreSQL it does nothing. A reader
// on another connection (a serving portal beside a command) may hold the
// log back: then the checkpoint moves what it can and the rest follows at
// SQLite's next automatic checkpoint.
func TruncateWAL(ctx context.Context, db bun.IDB) error {
	if db.Dialect().Name() != dialect.SQLite {
		return nil
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint sqlite: %w", err)
	}
	return nil
}

// InTx runs fn in one transaction on db.
func InTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.RunInTx(ctx, nil, fn)
}
