package staff_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/staff"
)

// TestPaymentsNeedingAttention: one list serves the staff page, the admin
// API and the command line: an attempt open too long is listed once its
// threshold passes, a mismatch on an unpaid order before it, only while
// the order is unpaid, never for another organisation; the count agrees.
func TestPaymentsNeedingAttention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 0)
		first := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		first.Commit()
		p := f.Payments(first.ID)[0]
		list := func(ctx context.Context, q staff.AttentionQuery) []staff.AttentionPayment {
			t.Helper()
			l, err := staff.Of(f.Svc).PaymentsNeedingAttention(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			n, err := staff.Of(f.Svc).CountPaymentsNeedingAttention(ctx, q, 0)
			if err != nil || n != len(l) {
				t.Fatalf("count %d %v, listed %d", n, err, len(l))
			}
			return l
		}
		if l := list(f.Ctx, staff.AttentionQuery{}); len(l) != 0 {
			t.Fatalf("a fresh attempt needs attention: %+v", l)
		}
		later := staff.AttentionQuery{PendingSince: clock.Now().Add(time.Hour)}
		l := list(f.Ctx, later)
		if len(l) != 1 || l[0].Reason != staff.AttentionPendingTooLong || l[0].Payment.Reference != p.Reference || l[0].Order.ID != p.OrderID || l[0].RefundByHand {
			t.Fatalf("pending too long: %+v", l)
		}
		if l := list(engine.WithOrganisation(f.Ctx, 2), later); len(l) != 0 {
			t.Fatalf("another organisation sees %+v", l)
		}
		if l := list(f.Ctx, staff.AttentionQuery{OrganisationID: 2, PendingSince: later.PendingSince}); len(l) != 0 {
			t.Fatalf("organisation 2 sees %+v", l)
		}

		// A confirmation that did not match (as the settlement records it).
		if _, err := db.NewUpdate().Model((*engine.Payment)(nil)).Set("problem = ?", "amount mismatch").Where("id = ?", p.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		l = list(f.Ctx, staff.AttentionQuery{})
		if len(l) != 1 || l[0].Reason != staff.AttentionProblem {
			t.Fatalf("problem: %+v", l)
		}
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("id = ?", p.OrderID).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		// Once the order is no longer unpaid, the mismatch is history.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Where("id = ?", order.ID).Exec(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if l := list(f.Ctx, staff.AttentionQuery{}); len(l) != 0 {
			t.Fatalf("a mismatch of a paid order: %+v", l)
		}
		if n, err := staff.Of(f.Svc).CountPaymentsNeedingAttention(f.Ctx, later, order.PeriodID+1000); err != nil || n != 0 {
			t.Fatalf("another period counts %d %v", n, err)
		}
	})
}
