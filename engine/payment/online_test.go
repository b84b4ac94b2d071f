package payment_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
)

func paid(ref, eventID string, outcome engine.PaymentOutcome) engine.PaymentConfirmation {
	return engine.PaymentConfirmation{Reference: ref, Outcome: outcome, AmountMinor: 18450, Currency: "EUR", EventID: eventID,
		EventType: "test." + string(outcome), TransactionID: "pi_" + ref}
}

// TestEventsSettleOnceAndMonotonically: a duplicated event changes nothing;
// a later failure never undoes a success; the confirmation is queued once;
// the event ids are stored once each.
func TestEventsSettleOnceAndMonotonically(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, _ := enginetest.OnlineFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		if res := f.Event(paid(ref, "evt_1", engine.OutcomeSuccess)); res.Replayed || res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("first event: %+v", res)
		}
		before := f.State()
		for _, c := range []engine.PaymentConfirmation{
			paid(ref, "evt_1", engine.OutcomeSuccess),   // redelivered
			paid(ref, "evt_2", engine.OutcomeSuccess),   // another event for the same payment
			paid(ref, "evt_3", engine.OutcomeFailed),    // late failure
			paid(ref, "evt_4", engine.OutcomeCancelled), // late expiry
			paid(ref, "evt_5", engine.OutcomePending),   // late "processing"
		} {
			if res := f.Event(c); !res.Replayed || res.Outcome != engine.OutcomeSuccess {
				t.Errorf("event %s %s: %+v, want a replay of the success", c.EventID, c.Outcome, res)
			}
		}
		enginetest.AssertUnchanged(t, before, f.State())
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Errorf("instance %s, want COMPLETED", inst.Status)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Errorf("%d confirmations queued, want 1", n)
		}
		if n := f.Count((*engine.PaymentEvent)(nil), "reference = ?", ref); n != 5 {
			t.Errorf("%d events stored, want 5 (evt_1 once)", n)
		}
	})
}

// TestEventAmountMismatch: a confirmation for another amount or currency
// never completes the registration; it is recorded for staff, the attempt
// is closed, and the pay link makes a new checkout for the right amount.
func TestEventAmountMismatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		amount   int64
		currency string
	}{{"less", 100, "EUR"}, {"more", 18451, "EUR"}, {"other currency", 18450, "USD"}} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				f, fp := enginetest.OnlineFixture(t, db)
				r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
				link := r.Commit().PaymentURL
				ref := f.AttemptOf(link)
				c := paid(ref, "evt_m", engine.OutcomeSuccess)
				c.AmountMinor, c.Currency = tc.amount, tc.currency
				if res := f.Event(c); !res.Mismatch || res.Order.Status != engine.OrderUnpaid {
					t.Fatalf("mismatched event: %+v", res)
				}
				if inst := f.Instance(r.ID); inst.Status != engine.StateDone {
					t.Errorf("instance %s, want DONE", inst.Status)
				}
				ps := f.Payments(r.ID)
				if len(ps) != 1 || ps[0].Status != engine.PaymentFailed || ps[0].Problem == "" {
					t.Fatalf("attempt = %+v, want FAILED with the problem recorded", ps)
				}
				if n := f.Count((*engine.PaymentEvent)(nil), "reference = ? AND note <> ''", ref); n != 1 {
					t.Errorf("%d events with a note, want 1", n)
				}
				// The right amount for the same attempt later: still never completes it.
				if res := f.Event(paid(ref, "evt_ok", engine.OutcomeSuccess)); !res.Mismatch || res.Order.Status != engine.OrderUnpaid {
					t.Errorf("a later event for the mismatched attempt: %+v", res)
				}
				next := f.AttemptOf(link)
				if next == ref || len(fp.Created) != 2 || fp.Created[1].AmountMinor != 18450 {
					t.Fatalf("pay link after a mismatch: %s, %d checkouts", next, len(fp.Created))
				}
				if res := f.Event(paid(next, "evt_n", engine.OutcomeSuccess)); res.Order.Status != engine.OrderPaid {
					t.Errorf("paying the new checkout: %+v", res)
				}
			})
		})
	}
}

// TestAsyncPaymentOutOfOrder: "completed, unpaid" (SEPA debit) keeps the
// attempt pending as confirming; the async success completes it; the
// "completed, unpaid" event arriving after that changes nothing. An async
// failure closes a confirming attempt.
func TestAsyncPaymentOutOfOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, _ := enginetest.OnlineFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		if res := f.Event(paid(ref, "evt_p", engine.OutcomePending)); res.Outcome != engine.OutcomePending || res.Order.Status != engine.OrderUnpaid {
			t.Fatalf("processing: %+v", res)
		}
		if ps := f.Payments(r.ID); ps[0].Status != engine.PaymentPending || ps[0].ConfirmingAt == nil {
			t.Fatalf("attempt = %+v, want PENDING and confirming", ps[0])
		}
		if res := f.Event(paid(ref, "evt_s", engine.OutcomeSuccess)); res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("async success: %+v", res)
		}
		before := f.State()
		if res := f.Event(paid(ref, "evt_p2", engine.OutcomePending)); !res.Replayed || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("late processing event: %+v", res)
		}
		enginetest.AssertUnchanged(t, before, f.State())

		other := f.Start("demo-1", 5)
		ref2 := f.AttemptOf(other.Commit().PaymentURL)
		c := paid(ref2, "evt_p3", engine.OutcomePending)
		c.AmountMinor = f.Payments(other.ID)[0].AmountMinor
		f.Event(c)
		c.EventID, c.Outcome = "evt_f3", engine.OutcomeFailed
		if res := f.Event(c); res.Outcome != engine.OutcomeFailed || res.Order.Status != engine.OrderUnpaid {
			t.Errorf("async failure: %+v", res)
		}
	})
}

// TestForgedAndUnknownEvents: a forged event is invalid, an event for an
// attempt the portal does not know is not found; neither changes anything.
func TestForgedAndUnknownEvents(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, _ := enginetest.OnlineFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		before := f.State()
		payload, _ := json.Marshal(paid(ref, "evt_1", engine.OutcomeSuccess))
		_, err := payment.Of(f.Svc).ReceivePaymentEvent(f.Ctx, "fake", payload, "forged")
		enginetest.WantCode(t, err, engine.CodeInvalid)
		payload, _ = json.Marshal(paid("PR-UNKNOWN", "evt_2", engine.OutcomeSuccess))
		_, err = payment.Of(f.Svc).ReceivePaymentEvent(f.Ctx, "fake", payload, "good")
		enginetest.WantCode(t, err, engine.CodeNotFound)
		_, err = payment.Of(f.Svc).ReceivePaymentEvent(f.Ctx, "stripe", payload, "good")
		enginetest.WantCode(t, err, engine.CodeNotFound)
		enginetest.AssertUnchanged(t, before, f.State())
		if n := f.Count((*engine.PaymentEvent)(nil), "1 = 1"); n != 0 {
			t.Errorf("%d events stored, want 0", n)
		}
	})
}

// TestSecondPaymentRefunded: two checkouts of one order both paid (two
// tabs: the member cancelled one, paid a new one, then paid the first) —
// the second payment is refunded through the provider and recorded. A
// payment landing on an order a reset cancelled is refunded the same way.
func TestSecondPaymentRefunded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := enginetest.OnlineFixture(t, db)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		link := r.Commit().PaymentURL
		first := f.AttemptOf(link)
		f.Event(paid(first, "evt_c", engine.OutcomeCancelled))
		second := f.AttemptOf(link)
		f.Event(paid(second, "evt_s", engine.OutcomeSuccess))
		res := f.Event(paid(first, "evt_late", engine.OutcomeSuccess))
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("second payment: %+v, want stale", res)
		}
		if len(fp.Refunds) != 0 {
			t.Fatalf("refunded inline (%+v): the refund is the job's", fp.Refunds)
		}
		f.RunJobs()
		if len(fp.Refunds) != 1 || fp.Refunds[0].Reference != first || fp.Refunds[0].TransactionID != "pi_"+first || fp.Refunds[0].AmountMinor != 18450 {
			t.Fatalf("refunds = %+v, want the first attempt's payment", fp.Refunds)
		}
		var p engine.Payment
		if err := f.DB.NewSelect().Model(&p).Where("reference = ?", first).Scan(f.Ctx); err != nil {
			t.Fatal(err)
		}
		if p.Status != engine.PaymentSucceeded || p.RefundStatus != engine.RefundDone || p.RefundID == nil || *p.RefundID != "re_"+first {
			t.Errorf("refunded attempt = %s refund %s %v", p.Status, p.RefundStatus, p.RefundID)
		}
		if n := f.Count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Errorf("%d confirmations, want 1", n)
		}

		// A refund the provider refuses stays due, and the reconciliation makes it.
		other := f.Start("demo-1", 5)
		olink := other.Commit().PaymentURL
		oref := f.AttemptOf(olink)
		if _, err := registration.Of(f.Svc).Reset(f.Ctx, other.UserKey, other.PID); err != nil {
			t.Fatal(err)
		}
		if !enginetest.Contains(fp.Expired, oref) {
			t.Errorf("reset did not close the checkout %s at the provider (%v)", oref, fp.Expired)
		}
		fp.SetDown(true)
		c := paid(oref, "evt_after_reset", engine.OutcomeSuccess)
		c.AmountMinor = amountOf(t, f, oref)
		if res := f.Event(c); !res.Stale {
			t.Fatalf("payment after reset: %+v", res)
		}
		f.RunJobs()
		if n := f.Count((*engine.Payment)(nil), "reference = ? AND refund_status = ?", oref, engine.RefundDue); n != 1 {
			t.Fatalf("refund not left due while the provider is down")
		}
		fp.SetDown(false)
		rep, err := payment.Of(f.Svc).ReconcilePayments(f.Ctx, time.Hour, 10)
		if err != nil || rep.Refunded != 1 {
			t.Fatalf("reconcile = %+v, %v; want one refund", rep, err)
		}
	})
}

func amountOf(t *testing.T, f *enginetest.Fixture, ref string) int64 {
	t.Helper()
	v, err := payment.Of(f.Svc).PaymentForPage(f.Ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	return v.Payment.AmountMinor
}

// TestPaymentGenerationFailed: the provider down at commit: the
// registration is committed without a link (the member is told it
// follows); the link is made on the next load, or by the job's
// CreateMissingPaymentLinks, which returns it for the e-mail.
func TestPaymentGenerationFailed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := enginetest.OnlineFixture(t, db)
		fp.SetDown(true)
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		form := r.Commit()
		if form.State != engine.StateDone || form.PaymentURL != "" {
			t.Fatalf("commit with the provider down: %s %q, want DONE without a link", form.State, form.PaymentURL)
		}
		if inst := f.Instance(r.ID); inst.Status != engine.StateDone {
			t.Fatalf("instance %s, want DONE (committed anyway)", inst.Status)
		}
		if later, _ := f.Load(engine.DemoUserKey); later.PaymentURL != "" {
			t.Errorf("load with the provider still down: %q", later.PaymentURL)
		}
		links, err := payment.Of(f.Svc).CreateMissingPaymentLinks(f.Ctx, 10)
		if err != nil || len(links) != 0 {
			t.Fatalf("missing links while down = %v, %v", links, err)
		}
		fp.SetDown(false)
		links, err = payment.Of(f.Svc).CreateMissingPaymentLinks(f.Ctx, 10)
		if err != nil || len(links) != 1 || links[0].UserKey != engine.DemoUserKey || links[0].Link == "" {
			t.Fatalf("missing links = %+v, %v", links, err)
		}
		if later, _ := f.Load(engine.DemoUserKey); later.PaymentURL != links[0].Link {
			t.Errorf("load after the link was made: %q, want %q", later.PaymentURL, links[0].Link)
		}
		if again, _ := payment.Of(f.Svc).CreateMissingPaymentLinks(f.Ctx, 10); len(again) != 0 {
			t.Errorf("links made twice: %+v", again)
		}

		// The next load makes it too.
		fp.SetDown(true)
		other := f.Start("demo-1", 5)
		if other.Commit().PaymentURL != "" {
			t.Fatal("link while down")
		}
		fp.SetDown(false)
		if form, _ := f.Load("demo-1"); form.PaymentURL == "" {
			t.Errorf("the next load made no link")
		}
	})
}

// TestPayLinkRenewsExpiredCheckout: a checkout past (or about to pass) its
// expiry is closed and a new one made; a live one is reused.
func TestPayLinkRenewsExpiredCheckout(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := enginetest.OnlineFixture(t, db)
		fp.Lifetime = time.Minute // within the margin: treated as expired
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		link := r.Commit().PaymentURL
		first := f.Payments(r.ID)[0].Reference
		fp.Lifetime = 0
		renewed := f.AttemptOf(link)
		if renewed == first || !enginetest.Contains(fp.Expired, first) {
			t.Fatalf("expired checkout %s: renewed %s, expired %v", first, renewed, fp.Expired)
		}
		if again := f.AttemptOf(link); again != renewed {
			t.Errorf("a live checkout was not reused: %s then %s", renewed, again)
		}
		if ps := f.Payments(r.ID); ps[0].Status != engine.PaymentCancelled || ps[1].Status != engine.PaymentPending {
			t.Errorf("attempts = %s, %s", ps[0].Status, ps[1].Status)
		}
		f.Event(paid(renewed, "evt_ok", engine.OutcomeSuccess))
		_, err := payment.Of(f.Svc).FollowPayLink(f.Ctx, f.OrderRefOf(link))
		enginetest.WantCode(t, err, engine.CodeConflict)
		_, err = payment.Of(f.Svc).FollowPayLink(f.Ctx, "PO-NOSUCHORDER")
		enginetest.WantCode(t, err, engine.CodeNotFound)
	})
}

// TestReconcileMissedWebhook: an attempt pending past the reconciliation
// age is asked about on the next load, and what the provider says settles
// it; the return page does the same at once (PaymentState).
func TestReconcileMissedWebhook(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := enginetest.OnlineFixture(t, db, engine.WithReconcileAfter(0))
		r := f.Start(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
		ref := f.AttemptOf(r.Commit().PaymentURL)
		if res, err := payment.Of(f.Svc).PaymentState(f.Ctx, ref); err != nil || res.Outcome != engine.OutcomeOpen {
			t.Fatalf("state before paying = %+v, %v", res, err)
		}
		fp.Mu.Lock()
		fp.Retrievals[ref] = engine.PaymentConfirmation{Reference: ref, Outcome: engine.OutcomeSuccess, AmountMinor: 18450, Currency: "eur", EventType: "retrieval"}
		fp.Mu.Unlock()
		f.Load(engine.DemoUserKey)
		if inst := f.Instance(r.ID); inst.Status != engine.StateCompleted {
			t.Fatalf("after a load: %s, want COMPLETED from the retrieval", inst.Status)
		}
		if res, err := payment.Of(f.Svc).PaymentState(f.Ctx, ref); err != nil || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("state = %+v, %v", res, err)
		}
	})
}
