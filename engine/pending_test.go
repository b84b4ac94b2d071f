package engine_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/payment"
	"portal/engine/registration"
)

// TestOnePendingPaymentPerOrder: after a failed payment, several tabs
// following the stable pay link at once share one new attempt (and the
// surplus checkouts they made are closed at the provider).
func TestOnePendingPaymentPerOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		link := r.commit().PaymentURL
		first := f.attemptOf(link)
		f.pay(first, engine.OutcomeFailed)
		const n = 10
		urls := make([]string, n)
		together(n, func(i int) {
			form, err := registration.Of(f.svc).Resume(f.ctx, r.userKey, r.pid)
			if err != nil {
				t.Error(err)
				return
			}
			if form.PaymentURL != link {
				t.Errorf("link after a failure = %q, want the stable %q", form.PaymentURL, link)
			}
			p, err := payment.Of(f.svc).FollowPayLink(f.ctx, f.orderRefOf(link))
			if err != nil {
				t.Error(err)
				return
			}
			urls[i] = p.PaymentURL
		})
		if urls[0] == "" || strings.Contains(urls[0], first) {
			t.Fatalf("checkout %q after a failed attempt %s, want a new one", urls[0], first)
		}
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
