package registration_test

import (
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/registration"
)

// TestLateSuccessAfterCancel: the member cancelled at the gateway, yet the
// provider later confirms the same attempt as paid: the money counts.
func TestLateSuccessAfterCancel(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		if res := f.Pay(ref, engine.OutcomeCancelled); res.Outcome != engine.OutcomeCancelled {
			t.Fatalf("cancel: %+v", res)
		}
		res := f.Pay(ref, engine.OutcomeSuccess)
		if res.Replayed || res.Stale || res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("late success: %+v", res)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
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
		f := enginetest.NewFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		first := f.AttemptOf(r.Commit().PaymentURL)
		f.Pay(first, engine.OutcomeFailed)
		retry, err := registration.Of(f.Svc).RetryPayment(f.Ctx, r.UserKey, r.PID)
		if err != nil {
			t.Fatal(err)
		}
		second := f.AttemptOf(retry.PaymentURL)
		if second == first {
			t.Fatalf("retry reused the failed attempt")
		}
		if res := f.Pay(second, engine.OutcomeSuccess); res.Order.Status != engine.OrderPaid {
			t.Fatalf("paying the retry: %+v", res)
		}
		res := f.Pay(first, engine.OutcomeSuccess)
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("the late first attempt: %+v, want stale success", res)
		}
		if n := f.Count((*engine.Payment)(nil), "status = ?", engine.PaymentSucceeded); n != 2 {
			t.Fatalf("%d succeeded attempts recorded, want 2", n)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Fatalf("%d confirmations, want 1", n)
		}
	})
}
