package books_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/books"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
)

// TestNightlyCheckKeepsFindings: sound books give no findings; an order
// marked paid by hand (no payment succeeded, its memberships still
// pending) breaks two rules, which the nightly run keeps for its
// organisation only, in words; once it is put right, the next run clears
// them.
func TestNightlyCheckKeepsFindings(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		d := enginetest.Seed(t, db)
		d.Commit(1, 2)
		if n, err := books.CheckAll(ctx, d.Svc, d.Svc.Clock()); err != nil || n != 0 {
			t.Fatalf("sound books: %d findings (%v)", n, err)
		}
		setStatus := func(s engine.OrderStatus) {
			t.Helper()
			if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", s).Where("1 = 1").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(engine.OrderPaid)
		if n, err := books.CheckAll(ctx, d.Svc, d.Svc.Clock()); err != nil || n != 2 {
			t.Fatalf("an order marked paid by hand: %d findings (%v), want 2", n, err)
		}
		kept, err := books.Findings(ctx, db, 1)
		if err != nil || len(kept) != 2 || kept[0].Rule != books.RulePaidHasPayment || kept[1].Rule != books.RulePaidMemberships ||
			!strings.Contains(kept[0].Message, "order 1 is paid, but none of its payments succeeded") || kept[0].Records != "order 1" {
			t.Fatalf("kept %+v (%v)", kept, err)
		}
		if other, err := books.Findings(ctx, db, 2); err != nil || len(other) != 0 {
			t.Fatalf("another organisation's findings: %+v (%v)", other, err)
		}
		if n, err := books.FindingCount(ctx, db); err != nil || n != 2 {
			t.Fatalf("count %d (%v)", n, err)
		}
		setStatus(engine.OrderUnpaid)
		if n, err := books.CheckAll(ctx, d.Svc, d.Svc.Clock()); err != nil || n != 0 {
			t.Fatalf("put right: %d findings (%v)", n, err)
		}
		if n, err := books.FindingCount(ctx, db); err != nil || n != 0 {
			t.Fatalf("the findings of the run before stay: %d (%v)", n, err)
		}
	})
}
