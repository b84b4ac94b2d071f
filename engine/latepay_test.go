package engine_test

import (
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/registration"
)

// TestLateSuccessAfterCancel: the member cancelled at the gateway, yet the
// provider later confirms the same attempt as paid: the money counts.
func TestLateSuccessAfterCancel(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := f.attemptOf(r.commit().PaymentURL)
		if res := f.pay(ref, engine.OutcomeCancelled); res.Outcome != engine.OutcomeCancelled {
			t.Fatalf("cancel: %+v", res)
		}
		res := f.pay(ref, engine.OutcomeSuccess)
		if res.Replayed || res.Stale || res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("late success: %+v", res)
		}
		if inst := f.instance(r.id); inst.Status != engine.StateCompleted {
			t.Fatalf("instance %s, want COMPLETED", inst.Status)
		}
	})
}

// TestTwoAttemptsBothPaid: a failed attempt that the provider later confirms,
// after a retry already paid the order, is recorded for a refund and
// changes nothing else.
func TestTwoAttemptsBothPaid(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := newFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		first := f.attemptOf(r.commit().PaymentURL)
		f.pay(first, engine.OutcomeFailed)
		retry, err := registration.Of(f.svc).RetryPayment(f.ctx, r.userKey, r.pid)
		if err != nil {
			t.Fatal(err)
		}
		second := f.attemptOf(retry.PaymentURL)
		if second == first {
			t.Fatalf("retry reused the failed attempt")
		}
		if res := f.pay(second, engine.OutcomeSuccess); res.Order.Status != engine.OrderPaid {
			t.Fatalf("paying the retry: %+v", res)
		}
		res := f.pay(first, engine.OutcomeSuccess)
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("the late first attempt: %+v, want stale success", res)
		}
		if n := f.count((*engine.Payment)(nil), "status = ?", engine.PaymentSucceeded); n != 2 {
			t.Fatalf("%d succeeded attempts recorded, want 2", n)
		}
		if n := f.count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Fatalf("%d confirmations, want 1", n)
		}
	})
}
