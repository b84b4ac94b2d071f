package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Two processes write one SQLite file: a serving portal and an operator's
// command beside it, each with its own connection. A transaction that reads
// and then writes while the other connection writes must wait for it, not
// fail: a deferred transaction would get SQLITE_BUSY at its first write
// (its snapshot went stale, which no busy timeout can wait out), so
// OpenDB's write transactions begin IMMEDIATE. SQLite only: PostgreSQL's
// connections never fail that way.
func TestSQLiteWriterBesideAnotherWriterWaits(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "two.db")
	open := func() *bun.DB {
		db, err := engine.OpenDB(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	server, command := open(), open()
	if _, err := server.ExecContext(ctx, "CREATE TABLE counters (n INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}

	commandDone := make(chan error, 1)
	err := server.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM counters").Scan(ctx, &n); err != nil {
			return err
		}
		// The command writes now, between this transaction's read and its
		// write. With IMMEDIATE it waits for this transaction; deferred,
		// it commits at once and leaves this one's read stale.
		go func() {
			_, err := command.ExecContext(context.Background(), "INSERT INTO counters (n) VALUES (2)")
			commandDone <- err
		}()
		select {
		case err := <-commandDone: // deferred: the command did not wait
			commandDone <- err
		case <-time.After(300 * time.Millisecond): // it waits for this transaction, as it should
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO counters (n) VALUES (?)", n+1)
		return err
	})
	if err != nil {
		t.Fatalf("the read-then-write transaction beside another writer: %v", err)
	}
	if err := <-commandDone; err != nil {
		t.Fatalf("the other writer: %v", err)
	}
	var rows int
	if err := command.NewRaw("SELECT count(*) FROM counters").Scan(ctx, &rows); err != nil || rows != 2 {
		t.Fatalf("rows: %d, %v; want both writes", rows, err)
	}

	// A read-only transaction stays deferred: it does not hold the write
	// lock, so the other writer goes ahead while it is open.
	tx, err := server.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.NewRaw("SELECT count(*) FROM counters").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	writeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := command.ExecContext(writeCtx, "INSERT INTO counters (n) VALUES (3)"); err != nil {
		t.Fatalf("a write beside a read-only transaction: %v", err)
	}
}

// TestSQLiteOverwritesWhatIsDeleted: an erased value must not stay readable
// in the file's free space. With secure_delete a deleted or replaced value
// is overwritten with zeros; without it SQLite leaves the bytes in the
// page's free blocks, where a copy of the file still shows them. A
// checkpoint then carries the page into the file and empties the WAL
// (engine.TruncateWAL, which the erasure runs once it committed).
func TestSQLiteOverwritesWhatIsDeleted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "erase.db")
	db, err := engine.OpenDB("sqlite:" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var on int
	if err := db.QueryRowContext(ctx, "PRAGMA secure_delete").Scan(&on); err != nil || on != 1 {
		t.Errorf("secure_delete is %d (%v), want 1", on, err)
	}
	const secret = "Robin-Morgan-DE89370400440532013000"
	for _, q := range []string{
		"CREATE TABLE persons (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
		"INSERT INTO persons (name) VALUES ('Alex Morgan'), ('" + secret + "'), ('Sam Morgan')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := engine.TruncateWAL(ctx, db); err != nil {
		t.Fatal(err)
	}
	if !fileHolds(t, path, secret) {
		t.Fatal("the value never reached the file: the test proves nothing")
	}
	for _, q := range []string{"UPDATE persons SET name = 'erased person 2' WHERE id = 2", "DELETE FROM persons WHERE id = 3"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := engine.TruncateWAL(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		if fileHolds(t, f, secret) || fileHolds(t, f, "Sam Morgan") {
			t.Errorf("%s still holds an erased value", filepath.Base(f))
		}
	}
}

func fileHolds(t *testing.T, path, value string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(value))
}
