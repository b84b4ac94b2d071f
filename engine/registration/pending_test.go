package registration_test

import (
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
)

// TestOnePendingPaymentPerOrder: after a failed payment, several tabs
// following the stable pay link at once share one new attempt (and the
// surplus checkouts they made are closed at the provider).
func TestOnePendingPaymentPerOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		link := r.Commit().PaymentURL
		first := f.AttemptOf(link)
		f.Pay(first, engine.OutcomeFailed)
		const n = 10
		urls := make([]string, n)
		enginetest.Together(n, func(i int) {
			form, err := registration.Of(f.Svc).Resume(f.Ctx, r.UserKey, r.PID)
			if err != nil {
				t.Error(err)
				return
			}
			if form.PaymentURL != link {
				t.Errorf("link after a failure = %q, want the stable %q", form.PaymentURL, link)
			}
			p, err := payment.Of(f.Svc).FollowPayLink(f.Ctx, f.OrderRefOf(link))
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
		if got := f.Count((*engine.Payment)(nil), "status = ?", engine.PaymentPending); got != 1 {
			t.Fatalf("%d pending attempts, want 1", got)
		}
	})
}
