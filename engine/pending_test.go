package engine_test

import (
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
)

// TestOnePendingPaymentPerOrder: after a failed payment, several tabs asking
// for a new payment link at once share one attempt.
func TestOnePendingPaymentPerOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		f.pay(referenceOf(t, r.commit().PaymentURL), engine.OutcomeFailed)
		const n = 10
		urls := make([]string, n)
		together(n, func(i int) {
			form, err := f.svc.Resume(f.ctx, r.userKey, r.pid)
			if err != nil {
				t.Error(err)
				return
			}
			urls[i] = form.PaymentURL
		})
		for _, u := range urls {
			if u == "" || u != urls[0] {
				t.Fatalf("payment links %v, want one shared link", urls)
			}
		}
		if got := f.count((*engine.Payment)(nil), "status = ?", engine.PaymentPending); got != 1 {
			t.Fatalf("%d pending attempts, want 1", got)
		}
	})
}
