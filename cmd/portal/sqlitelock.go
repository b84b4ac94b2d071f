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
// is this process's own, gateway.go), and what SQLite's single writer
// suits anyway. serve takes an exclusive advisory lock on PATH.lock next to
// the database file and holds it for its life; a second serve on the same
// file refuses to start. migrate, seed and definitions take the same lock
// for their run: a migration or an import under a running server would
// change its schema or data beneath it, so they refuse while one serves the
// file, and `make run` (seed, then serve) is unaffected. PostgreSQL needs no
// lock: instances there share sessions through LISTEN/NOTIFY.

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
			return nil, fmt.Errorf("%w (%s is locked): one process serves a SQLite file; stop the other one first, or use PostgreSQL to run several instances", errSQLiteInUse, lockPath)
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
