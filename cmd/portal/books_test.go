package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"portal/engine"
	"portal/engine/enginetest"
)

// TestBooksCheckCommand: on sound books `books check` says every rule is
// kept; an order marked paid by hand, with no payment and its memberships
// waiting, is named with both rules it breaks, and the command fails so
// that a cron job sees it. An unknown organisation is a clear error.
func TestBooksCheckCommand(t *testing.T) {
	dir := t.TempDir()
	dbFile := filepath.Join(dir, "b.db")
	e := env("PORTAL_DATABASE_URL", "sqlite:"+dbFile)
	if out, err := runCmd(t, e, "migrate", "up"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	db, err := engine.OpenDB("sqlite:" + dbFile)
	if err != nil {
		t.Fatal(err)
	}
	demo := enginetest.Seed(t, db)
	demo.Commit(1, 2)
	if out, err := runCmd(t, e, "books", "check"); err != nil || !strings.Contains(out, "every rule kept") {
		t.Fatalf("sound books: %v\n%s", err, out)
	}
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Where("1 = 1").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, err := runCmd(t, e, "books", "check", "--org", "1")
	if !errors.Is(err, errBooksViolated) || !strings.Contains(out, "paid_has_payment: order 1 is paid, but none of its payments succeeded") ||
		!strings.Contains(out, "paid_memberships_active: order 1 is paid, but 2 of its memberships still wait for payment") {
		t.Fatalf("an order marked paid by hand: %v\n%s", err, out)
	}
	if out, err := runCmd(t, e, "books", "check", "--org", "99"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("an unknown organisation: %v\n%s", err, out)
	}
	if _, err := runCmd(t, e, "books"); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Fatalf("usage: %v", err)
	}
}
