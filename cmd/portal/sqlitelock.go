package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// A SQLite file is served by one process. That is what lets the session
// cache run on SQLite without a bus between processes (every session write
// is this process's own, gateway.go). serve takes an exclusive advisory
// lock on PATH.lock next to the database file and holds it for its life; a
// second serve on the same file refuses to start. `migrate up|down` take
// the same lock for their run and so refuse while a server runs: a schema
// change beneath a server would leave it running queries of another schema.
// `restore` takes it too: it replaces the whole file (backup.go).
// seed takes it only when it migrates (openSeedDatabase).
//
// Every other command (backup, apikeys, staff, orgs, payments, invite, persons,
// webhooks, export, definitions, jobs) takes no lock and runs beside a
// serving process, as it runs beside the instances on PostgreSQL:
//   - SQLite in WAL mode lets the second process read while serve writes,
//     and its writes wait for serve's (busy_timeout, IMMEDIATE
//     transactions: engine.OpenDB), and the other way round;
//   - what the commands change reaches the server as it reaches another
//     instance on PostgreSQL: API keys and staff records are read from the
//     database on every request (a revoked key or removed staff member is
//     refused at the next one), definitions by their immutable version,
//     organisation and payment settings again after OrganisationRefresh and
//     payproviders.DefaultRefresh;
//   - no command writes sessions, so the in-process session cache stays
//     right: the server's own Manager is still the only session writer. A
//     command that ends sessions must do it through a session.Manager on a
//     bus that reaches the server (on PostgreSQL too, where the cache hears
//     of writes only through its bus).
//
// PostgreSQL needs no lock: instances there share sessions through
// LISTEN/NOTIFY, and migrations run under an advisory lock.

// errSQLiteInUse is returned when another process holds the lock.
var errSQLiteInUse = errors.New("the SQLite database is in use by another portal process")

// lockSQLite takes the lock of databaseURL's SQLite file and returns its
// release; for PostgreSQL and in-memory SQLite it does nothing.
func lockSQLite(databaseURL string) (release func(), err error) {
	path, ok := sqliteFile(databaseURL)
	if !ok {
		return func() {}, nil
	}
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("SQLite lock %s: %w", lockPath, err)
	}
	if err := flockExclusive(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%w (%s is locked): one process serves a SQLite file, and migrate up and down and restore refuse while it does; stop it first, or use PostgreSQL to run several instances", errSQLiteInUse, lockPath)
		}
		return nil, fmt.Errorf("SQLite lock %s: %w", lockPath, err)
	}
	// Closing the file releases the lock; the file itself stays, empty,
	// since removing it could let two processes lock two different files.
	return func() { f.Close() }, nil
}

// sqliteFile returns the file of a sqlite: URL as SQLite opens it, false
// for other databases and for in-memory ones. The database is opened as an
// SQLite URI ("file:" + path, engine.OpenDB), where "#" ends the name and
// %HH is decoded; the result is made absolute with its directory's
// symbolic links resolved, so that every spelling of one file ("p.db",
// "./p.db", "p%2Edb", a link to its folder) takes the same lock. A hard
// link to the file under another name would still escape it.
func sqliteFile(databaseURL string) (string, bool) {
	rest, ok := strings.CutPrefix(databaseURL, "sqlite:")
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, "//")
	rest, _, _ = strings.Cut(rest, "#")
	path, query, _ := strings.Cut(rest, "?")
	if decoded, err := url.PathUnescape(path); err == nil {
		path = decoded
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file::memory:") || strings.Contains(query, "mode=memory") {
		return "", false
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			path = filepath.Join(dir, filepath.Base(abs))
		}
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target // the database file itself is a link
		}
	}
	return path, true
}
