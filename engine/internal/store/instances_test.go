package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/internal/store"
)

// TestBumpVersionLetsOneOfTwoReadersWin: two requests read the same
// registration; the first to write moves it on, the second gets the
// conflict and changes nothing (the optimistic lock every step relies on).
func TestBumpVersionLetsOneOfTwoReadersWin(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		ctx := t.Context()
		first, err := store.LoadInstance(ctx, db, engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		second, err := store.LoadInstance(ctx, db, engine.DemoUserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		before := first.Version
		now := time.Now().UTC()
		if err := store.BumpVersion(ctx, db, first, now); err != nil {
			t.Fatalf("the first writer: %v", err)
		}
		if err := store.BumpVersion(ctx, db, second, now); !errors.Is(err, store.ErrMovedMeanwhile) {
			t.Fatalf("the second writer: %v, want ErrMovedMeanwhile", err)
		}
		if got := f.Instance(r.ID).Version; got != before+1 {
			t.Fatalf("version %d after one write won, want %d", got, before+1)
		}
	})
}

// TestInsertInstanceRefusesASecondOpenRegistration: the unique index on
// open registrations is reported as the engine's conflict, on both
// databases, not as a database error.
func TestInsertInstanceRefusesASecondOpenRegistration(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex)
		again := f.Instance(r.ID)
		again.ID = 0
		err := store.InsertInstance(t.Context(), db, &again)
		enginetest.WantCode(t, err, engine.CodeConflict)
		if !store.IsUniqueViolation(errors.Unwrap(err)) {
			t.Fatalf("the conflict does not carry the unique violation: %v", err)
		}
	})
}

func TestParseProcessID(t *testing.T) {
	for _, raw := range []string{"", "0", "-3", "x", "1.5", " 7", "9223372036854775808"} {
		if _, err := store.ParseProcessID(raw); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("ParseProcessID(%q) error %v, want not found", raw, err)
		}
	}
	if id, err := store.ParseProcessID("42"); err != nil || id != 42 {
		t.Errorf("ParseProcessID(42) = %d, %v", id, err)
	}
}
