package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/clock"
)

const backupUsage = `usage:
  portal backup --out FILE   an online, consistent copy of the SQLite database, taken while the
      server runs (VACUUM INTO); FILE must not exist. PostgreSQL: pg_dump -Fc (docs/OPERATIONS.md)`

const restoreUsage = `usage:
  portal restore FILE   put FILE, a copy made by portal backup, in the SQLite database's place;
      refused while a server holds the database (stop it first) and for a file that is not a
      portal database; the database it replaces is kept beside it. PostgreSQL: pg_restore`

// migrationsTable is the table in which bun's migrator records the
// migrations applied: every portal database has it, and little else does.
const migrationsTable = "bun_migrations"

// postgresBackup is what backup and restore say on PostgreSQL, whose own
// tools copy a database online and whole (docs/OPERATIONS.md, "Backup").
// The address is not repeated: it may hold a password.
const postgresBackup = `on PostgreSQL, back up with pg_dump and restore with pg_restore (docs/OPERATIONS.md, "Backup" and "Restore"):
  pg_dump -Fc --file portal.dump "$PORTAL_DATABASE_URL"
  pg_restore --clean --if-exists --no-owner --dbname "$PORTAL_DATABASE_URL" portal.dump`

// cmdBackup copies the SQLite database to a new file while the server
// serves it. VACUUM INTO reads in one transaction, so the copy is the
// database as of one moment (WAL mode lets the server write meanwhile),
// and writes a compact file with no -wal beside it, which is a database
// by itself, ready for restore.
func cmdBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	flags := newFlagSet("backup", stderr)
	out := flags.String("out", "", "the file to write the copy to; it must not exist")
	cfg, rest, err := config.Load(flags, args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 || *out == "" {
		return errors.New(backupUsage)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	source, ok := sqliteFile(cfg.DatabaseURL)
	if !ok {
		if strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
			return errors.New("backup: the database is in memory: there is no file to copy")
		}
		return errors.New("backup: " + postgresBackup)
	}
	if _, err := os.Stat(source); err != nil {
		return fmt.Errorf("backup: the database %s: %w", source, err)
	}
	target, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	// Made here, empty, readable by its owner only (it holds every
	// member's data), and never over a file that exists: VACUUM INTO
	// writes into an empty file.
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup: %s exists; a backup never overwrites a file: name a new one", target)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	f.Close()
	if err := vacuumInto(ctx, cfg.DatabaseURL, target); err != nil {
		os.Remove(target)
		return fmt.Errorf("backup: %w", err)
	}
	info, err := os.Stat(target)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes)\n", source, target, info.Size())
	fmt.Fprintln(stdout, "keep PORTAL_SESSION_KEY with it: the clubs' secrets in it are sealed with that key")
	return nil
}

// vacuumInto writes the database of databaseURL into the empty file
// target, beside a server, and makes the copy durable.
func vacuumInto(ctx context.Context, databaseURL, target string) error {
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", target); err != nil {
		return err
	}
	return syncFile(target)
}

// cmdRestore puts a backup in the place of the SQLite database.
//
// It refuses while a server holds the database by taking the lock serve
// holds for its whole life (sqlitelock.go), and keeps it until the new
// file is in place, so that no server starts on a half-restored database
// either. That flock is the kernel's: it ends with the process that holds
// it, crashed or not, so it is never stale, where a lock row, a PID file
// or the job runner's lease heartbeats could outlive a crash and would
// need a timeout that either refuses too long or lets a stalled server
// slip through.
//
// The backup is copied beside the database, checked there (it opens as
// SQLite, passes quick_check and has the migrations table), synced, and
// renamed over the database: readers see the old file or the new one,
// never a mixture. The old database's -wal and -shm go first, since
// SQLite would otherwise replay the old database's log onto the new
// file; the old database itself stays, with its -wal, under a dated name.
func cmdRestore(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	flags := newFlagSet("restore", stderr)
	cfg, rest, err := loadConfigAround(flags, args, getenv)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New(restoreUsage)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	target, ok := sqliteFile(cfg.DatabaseURL)
	if !ok {
		if strings.HasPrefix(cfg.DatabaseURL, "sqlite:") {
			return errors.New("restore: the database is in memory: there is no file to restore into")
		}
		return errors.New("restore: " + postgresBackup)
	}
	backup, err := filepath.Abs(rest[0])
	if err != nil {
		return err
	}
	if backup == target {
		return fmt.Errorf("restore: %s is the database itself", backup)
	}
	unlock, err := lockSQLite(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer unlock()

	staged := target + ".restoring"
	removeDatabaseFiles(staged) // a restore that stopped half-way
	if err := copyFile(backup, staged); err != nil {
		removeDatabaseFiles(staged)
		return fmt.Errorf("restore: %w", err)
	}
	applied, err := checkPortalDatabase(ctx, staged)
	if err != nil {
		removeDatabaseFiles(staged)
		return fmt.Errorf("restore: %s is not a portal database: %w", backup, err)
	}
	if err := syncFile(staged); err != nil {
		removeDatabaseFiles(staged)
		return fmt.Errorf("restore: %w", err)
	}

	kept := ""
	if _, err := os.Stat(target); err == nil {
		kept = target + ".replaced-" + clock.Now().UTC().Format("20060102T150405Z")
		for _, suffix := range []string{"", "-wal"} {
			if err := os.Link(target+suffix, kept+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				removeDatabaseFiles(staged)
				return fmt.Errorf("restore: keeping the database it replaces: %w", err)
			}
		}
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(target + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore: the replaced database's %s: %w", suffix, err)
		}
	}
	if err := os.Rename(staged, target); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := syncFile(filepath.Dir(target)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored %s into %s (%d migrations applied; portal serve applies newer ones)\n", backup, target, applied)
	if kept != "" {
		fmt.Fprintf(stdout, "the database it replaced is kept as %s: delete it once the restored one is checked\n", kept)
	}
	return nil
}

// checkPortalDatabase opens the SQLite file path, checks it whole and
// counts the migrations applied to it; then it leaves the file alone by
// itself (journal_mode DELETE: no -wal beside it), as the backup was.
func checkPortalDatabase(ctx context.Context, path string) (applied int, err error) {
	db, err := engine.OpenDB("sqlite:" + path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return 0, err
	}
	if check != "ok" {
		return 0, fmt.Errorf("SQLite's quick_check: %s", check)
	}
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", migrationsTable).Scan(&tables); err != nil {
		return 0, err
	}
	if tables == 0 {
		return 0, fmt.Errorf("it has no %s table", migrationsTable)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+migrationsTable).Scan(&applied); err != nil {
		return 0, err
	}
	if applied == 0 {
		return 0, errors.New("no migration was applied to it")
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = DELETE"); err != nil {
		return 0, err
	}
	return applied, nil
}

// copyFile copies src to the new file dst, readable by its owner only.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncFile makes what was written to path (a file or a folder's entries)
// durable.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// removeDatabaseFiles removes a SQLite file and its -wal, -shm and
// -journal, where they exist.
func removeDatabaseFiles(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}
