package enginetest_test

import (
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
)

// TestFixtureWalksTheDemo: the fixture's run answers every demo question
// and commits; paying the attempt its pay link opens completes the
// registration.
func TestFixtureWalksTheDemo(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		form := r.Commit()
		if n := len(f.Memberships(r.ID)); n != 2 {
			t.Fatalf("%d memberships, want 2", n)
		}
		if res := f.Pay(f.AttemptOf(form.PaymentURL), engine.OutcomeSuccess); res.Order.Status != engine.OrderPaid {
			t.Fatalf("after paying: order %s, want PAID", res.Order.Status)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Fatalf("after paying: %s, want COMPLETED", inst.Status)
		}
	})
}
