package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/demodata"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/engine/registration"
)

// fakeProvider is a provider with state of its own, standing in for one
// whose events the tests write (the Stripe adapter's requests are tested
// against stripe-mock in engine/stripepay). Its events are JSON
// confirmations, "signed" by the signature "good".
type fakeProvider struct {
	mu       sync.Mutex
	down     bool
	lifetime time.Duration
	created  []engine.CheckoutRequest
	expired  []string
	refunds  []engine.RefundRequest
	retrieve map[string]engine.PaymentConfirmation
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) CreateCheckout(_ context.Context, req engine.CheckoutRequest) (engine.Checkout, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return engine.Checkout{}, errors.New("fake provider down")
	}
	p.created = append(p.created, req)
	exp := req.ExpiresAt
	if p.lifetime != 0 {
		exp = clock.Now().Add(p.lifetime)
	}
	return engine.Checkout{ProviderID: "cs_" + req.Reference, URL: "https://pay.fake/" + req.Reference, ExpiresAt: exp}, nil
}

func (p *fakeProvider) Retrieve(_ context.Context, pay engine.Payment) (engine.PaymentConfirmation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.retrieve[pay.Reference]; ok {
		return c, nil
	}
	return engine.PaymentConfirmation{Reference: pay.Reference, Outcome: engine.OutcomeOpen}, nil
}

func (p *fakeProvider) Expire(_ context.Context, pay engine.Payment) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expired = append(p.expired, pay.Reference)
	return nil
}

func (p *fakeProvider) Refund(_ context.Context, req engine.RefundRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return "", errors.New("fake provider down")
	}
	p.refunds = append(p.refunds, req)
	return "re_" + req.Reference, nil
}

func (p *fakeProvider) ParseEvent(payload []byte, signature string) (*engine.PaymentConfirmation, error) {
	if signature != "good" {
		return nil, engine.ErrForgedEvent
	}
	var c engine.PaymentConfirmation
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func (p *fakeProvider) setDown(down bool) { p.mu.Lock(); p.down = down; p.mu.Unlock() }

// onlineFixture is a fixture whose service pays at a fakeProvider.
func onlineFixture(t *testing.T, db *bun.DB, opts ...engine.ServiceOption) (*fixture, *fakeProvider) {
	t.Helper()
	if err := demodata.SeedDemo(context.Background(), db, 2, clock.Now().UTC()); err != nil {
		t.Fatalf("seed: %v", err)
	}
	fp := &fakeProvider{retrieve: map[string]engine.PaymentConfirmation{}}
	return &fixture{t: t, ctx: context.Background(), db: db, svc: engine.NewService(db, fp, opts...)}, fp
}

// event delivers a "signed" event to the service.
func (f *fixture) event(c engine.PaymentConfirmation) *payment.PaymentResult {
	f.t.Helper()
	payload, _ := json.Marshal(c)
	res, err := payment.Of(f.svc).ReceivePaymentEvent(f.ctx, "fake", payload, "good")
	if err != nil {
		f.t.Fatalf("event %s %s: %v", c.EventID, c.Outcome, err)
	}
	return res
}

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
		f, _ := onlineFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := f.attemptOf(r.commit().PaymentURL)
		if res := f.event(paid(ref, "evt_1", engine.OutcomeSuccess)); res.Replayed || res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("first event: %+v", res)
		}
		before := f.state()
		for _, c := range []engine.PaymentConfirmation{
			paid(ref, "evt_1", engine.OutcomeSuccess),   // redelivered
			paid(ref, "evt_2", engine.OutcomeSuccess),   // another event for the same payment
			paid(ref, "evt_3", engine.OutcomeFailed),    // late failure
			paid(ref, "evt_4", engine.OutcomeCancelled), // late expiry
			paid(ref, "evt_5", engine.OutcomePending),   // late "processing"
		} {
			if res := f.event(c); !res.Replayed || res.Outcome != engine.OutcomeSuccess {
				t.Errorf("event %s %s: %+v, want a replay of the success", c.EventID, c.Outcome, res)
			}
		}
		assertUnchanged(t, before, f.state())
		if inst := f.instance(r.id); inst.Status != engine.StateCompleted {
			t.Errorf("instance %s, want COMPLETED", inst.Status)
		}
		if n := f.count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Errorf("%d confirmations queued, want 1", n)
		}
		if n := f.count((*engine.PaymentEvent)(nil), "reference = ?", ref); n != 5 {
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
				f, fp := onlineFixture(t, db)
				r := f.start(engine.DemoUserKey, alex, robin)
				link := r.commit().PaymentURL
				ref := f.attemptOf(link)
				c := paid(ref, "evt_m", engine.OutcomeSuccess)
				c.AmountMinor, c.Currency = tc.amount, tc.currency
				if res := f.event(c); !res.Mismatch || res.Order.Status != engine.OrderUnpaid {
					t.Fatalf("mismatched event: %+v", res)
				}
				if inst := f.instance(r.id); inst.Status != engine.StateDone {
					t.Errorf("instance %s, want DONE", inst.Status)
				}
				ps := f.payments(r.id)
				if len(ps) != 1 || ps[0].Status != engine.PaymentFailed || ps[0].Problem == "" {
					t.Fatalf("attempt = %+v, want FAILED with the problem recorded", ps)
				}
				if n := f.count((*engine.PaymentEvent)(nil), "reference = ? AND note <> ''", ref); n != 1 {
					t.Errorf("%d events with a note, want 1", n)
				}
				// The right amount for the same attempt later: still never completes it.
				if res := f.event(paid(ref, "evt_ok", engine.OutcomeSuccess)); !res.Mismatch || res.Order.Status != engine.OrderUnpaid {
					t.Errorf("a later event for the mismatched attempt: %+v", res)
				}
				next := f.attemptOf(link)
				if next == ref || len(fp.created) != 2 || fp.created[1].AmountMinor != 18450 {
					t.Fatalf("pay link after a mismatch: %s, %d checkouts", next, len(fp.created))
				}
				if res := f.event(paid(next, "evt_n", engine.OutcomeSuccess)); res.Order.Status != engine.OrderPaid {
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
		f, _ := onlineFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := f.attemptOf(r.commit().PaymentURL)
		if res := f.event(paid(ref, "evt_p", engine.OutcomePending)); res.Outcome != engine.OutcomePending || res.Order.Status != engine.OrderUnpaid {
			t.Fatalf("processing: %+v", res)
		}
		if ps := f.payments(r.id); ps[0].Status != engine.PaymentPending || ps[0].ConfirmingAt == nil {
			t.Fatalf("attempt = %+v, want PENDING and confirming", ps[0])
		}
		if res := f.event(paid(ref, "evt_s", engine.OutcomeSuccess)); res.Outcome != engine.OutcomeSuccess || res.Order.Status != engine.OrderPaid {
			t.Fatalf("async success: %+v", res)
		}
		before := f.state()
		if res := f.event(paid(ref, "evt_p2", engine.OutcomePending)); !res.Replayed || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("late processing event: %+v", res)
		}
		assertUnchanged(t, before, f.state())

		other := f.start("demo-1", 5)
		ref2 := f.attemptOf(other.commit().PaymentURL)
		c := paid(ref2, "evt_p3", engine.OutcomePending)
		c.AmountMinor = f.payments(other.id)[0].AmountMinor
		f.event(c)
		c.EventID, c.Outcome = "evt_f3", engine.OutcomeFailed
		if res := f.event(c); res.Outcome != engine.OutcomeFailed || res.Order.Status != engine.OrderUnpaid {
			t.Errorf("async failure: %+v", res)
		}
	})
}

// TestForgedAndUnknownEvents: a forged event is invalid, an event for an
// attempt the portal does not know is not found; neither changes anything.
func TestForgedAndUnknownEvents(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, _ := onlineFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := f.attemptOf(r.commit().PaymentURL)
		before := f.state()
		payload, _ := json.Marshal(paid(ref, "evt_1", engine.OutcomeSuccess))
		_, err := payment.Of(f.svc).ReceivePaymentEvent(f.ctx, "fake", payload, "forged")
		wantCode(t, err, engine.CodeInvalid)
		payload, _ = json.Marshal(paid("PR-UNKNOWN", "evt_2", engine.OutcomeSuccess))
		_, err = payment.Of(f.svc).ReceivePaymentEvent(f.ctx, "fake", payload, "good")
		wantCode(t, err, engine.CodeNotFound)
		_, err = payment.Of(f.svc).ReceivePaymentEvent(f.ctx, "stripe", payload, "good")
		wantCode(t, err, engine.CodeNotFound)
		assertUnchanged(t, before, f.state())
		if n := f.count((*engine.PaymentEvent)(nil), "1 = 1"); n != 0 {
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
		f, fp := onlineFixture(t, db)
		r := f.start(engine.DemoUserKey, alex, robin)
		link := r.commit().PaymentURL
		first := f.attemptOf(link)
		f.event(paid(first, "evt_c", engine.OutcomeCancelled))
		second := f.attemptOf(link)
		f.event(paid(second, "evt_s", engine.OutcomeSuccess))
		res := f.event(paid(first, "evt_late", engine.OutcomeSuccess))
		if !res.Stale || res.Outcome != engine.OutcomeSuccess {
			t.Fatalf("second payment: %+v, want stale", res)
		}
		if len(fp.refunds) != 0 {
			t.Fatalf("refunded inline (%+v): the refund is the job's", fp.refunds)
		}
		f.runJobs()
		if len(fp.refunds) != 1 || fp.refunds[0].Reference != first || fp.refunds[0].TransactionID != "pi_"+first || fp.refunds[0].AmountMinor != 18450 {
			t.Fatalf("refunds = %+v, want the first attempt's payment", fp.refunds)
		}
		var p engine.Payment
		if err := f.db.NewSelect().Model(&p).Where("reference = ?", first).Scan(f.ctx); err != nil {
			t.Fatal(err)
		}
		if p.Status != engine.PaymentSucceeded || p.RefundStatus != engine.RefundDone || p.RefundID == nil || *p.RefundID != "re_"+first {
			t.Errorf("refunded attempt = %s refund %s %v", p.Status, p.RefundStatus, p.RefundID)
		}
		if n := f.count((*engine.OutboxMessage)(nil), "1 = 1"); n != 1 {
			t.Errorf("%d confirmations, want 1", n)
		}

		// A refund the provider refuses stays due, and the reconciliation makes it.
		other := f.start("demo-1", 5)
		olink := other.commit().PaymentURL
		oref := f.attemptOf(olink)
		if _, err := registration.Of(f.svc).Reset(f.ctx, other.userKey, other.pid); err != nil {
			t.Fatal(err)
		}
		if !contains(fp.expired, oref) {
			t.Errorf("reset did not close the checkout %s at the provider (%v)", oref, fp.expired)
		}
		fp.setDown(true)
		c := paid(oref, "evt_after_reset", engine.OutcomeSuccess)
		c.AmountMinor = amountOf(t, f, oref)
		if res := f.event(c); !res.Stale {
			t.Fatalf("payment after reset: %+v", res)
		}
		f.runJobs()
		if n := f.count((*engine.Payment)(nil), "reference = ? AND refund_status = ?", oref, engine.RefundDue); n != 1 {
			t.Fatalf("refund not left due while the provider is down")
		}
		fp.setDown(false)
		rep, err := payment.Of(f.svc).ReconcilePayments(f.ctx, time.Hour, 10)
		if err != nil || rep.Refunded != 1 {
			t.Fatalf("reconcile = %+v, %v; want one refund", rep, err)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func amountOf(t *testing.T, f *fixture, ref string) int64 {
	t.Helper()
	v, err := payment.Of(f.svc).PaymentForPage(f.ctx, ref)
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
		f, fp := onlineFixture(t, db)
		fp.setDown(true)
		r := f.start(engine.DemoUserKey, alex, robin)
		form := r.commit()
		if form.State != engine.StateDone || form.PaymentURL != "" {
			t.Fatalf("commit with the provider down: %s %q, want DONE without a link", form.State, form.PaymentURL)
		}
		if inst := f.instance(r.id); inst.Status != engine.StateDone {
			t.Fatalf("instance %s, want DONE (committed anyway)", inst.Status)
		}
		if later, _ := f.load(engine.DemoUserKey); later.PaymentURL != "" {
			t.Errorf("load with the provider still down: %q", later.PaymentURL)
		}
		links, err := payment.Of(f.svc).CreateMissingPaymentLinks(f.ctx, 10)
		if err != nil || len(links) != 0 {
			t.Fatalf("missing links while down = %v, %v", links, err)
		}
		fp.setDown(false)
		links, err = payment.Of(f.svc).CreateMissingPaymentLinks(f.ctx, 10)
		if err != nil || len(links) != 1 || links[0].UserKey != engine.DemoUserKey || links[0].Link == "" {
			t.Fatalf("missing links = %+v, %v", links, err)
		}
		if later, _ := f.load(engine.DemoUserKey); later.PaymentURL != links[0].Link {
			t.Errorf("load after the link was made: %q, want %q", later.PaymentURL, links[0].Link)
		}
		if again, _ := payment.Of(f.svc).CreateMissingPaymentLinks(f.ctx, 10); len(again) != 0 {
			t.Errorf("links made twice: %+v", again)
		}

		// The next load makes it too.
		fp.setDown(true)
		other := f.start("demo-1", 5)
		if other.commit().PaymentURL != "" {
			t.Fatal("link while down")
		}
		fp.setDown(false)
		if form, _ := f.load("demo-1"); form.PaymentURL == "" {
			t.Errorf("the next load made no link")
		}
	})
}

// TestPayLinkRenewsExpiredCheckout: a checkout past (or about to pass) its
// expiry is closed and a new one made; a live one is reused.
func TestPayLinkRenewsExpiredCheckout(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := onlineFixture(t, db)
		fp.lifetime = time.Minute // within the margin: treated as expired
		r := f.start(engine.DemoUserKey, alex, robin)
		link := r.commit().PaymentURL
		first := f.payments(r.id)[0].Reference
		fp.lifetime = 0
		renewed := f.attemptOf(link)
		if renewed == first || !contains(fp.expired, first) {
			t.Fatalf("expired checkout %s: renewed %s, expired %v", first, renewed, fp.expired)
		}
		if again := f.attemptOf(link); again != renewed {
			t.Errorf("a live checkout was not reused: %s then %s", renewed, again)
		}
		if ps := f.payments(r.id); ps[0].Status != engine.PaymentCancelled || ps[1].Status != engine.PaymentPending {
			t.Errorf("attempts = %s, %s", ps[0].Status, ps[1].Status)
		}
		f.event(paid(renewed, "evt_ok", engine.OutcomeSuccess))
		_, err := payment.Of(f.svc).FollowPayLink(f.ctx, f.orderRefOf(link))
		wantCode(t, err, engine.CodeConflict)
		_, err = payment.Of(f.svc).FollowPayLink(f.ctx, "PO-NOSUCHORDER")
		wantCode(t, err, engine.CodeNotFound)
	})
}

// TestReconcileMissedWebhook: an attempt pending past the reconciliation
// age is asked about on the next load, and what the provider says settles
// it; the return page does the same at once (PaymentState).
func TestReconcileMissedWebhook(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f, fp := onlineFixture(t, db, engine.WithReconcileAfter(0))
		r := f.start(engine.DemoUserKey, alex, robin)
		ref := f.attemptOf(r.commit().PaymentURL)
		if res, err := payment.Of(f.svc).PaymentState(f.ctx, ref); err != nil || res.Outcome != engine.OutcomeOpen {
			t.Fatalf("state before paying = %+v, %v", res, err)
		}
		fp.mu.Lock()
		fp.retrieve[ref] = engine.PaymentConfirmation{Reference: ref, Outcome: engine.OutcomeSuccess, AmountMinor: 18450, Currency: "eur", EventType: "retrieval"}
		fp.mu.Unlock()
		f.load(engine.DemoUserKey)
		if inst := f.instance(r.id); inst.Status != engine.StateCompleted {
			t.Fatalf("after a load: %s, want COMPLETED from the retrieval", inst.Status)
		}
		if res, err := payment.Of(f.svc).PaymentState(f.ctx, ref); err != nil || res.Outcome != engine.OutcomeSuccess {
			t.Errorf("state = %+v, %v", res, err)
		}
	})
}

// runJobs runs the due jobs with the payment jobs' handlers of the
// fixture's service (a refund), failures included, and returns how many ran.
func (f *fixture) runJobs() int {
	f.t.Helper()
	r := jobs.New(f.db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	payment.Of(f.svc).SchedulePayments(r, clock.Now)
	n, err := r.Work(f.ctx, 100)
	if err != nil {
		f.t.Fatalf("run jobs: %v", err)
	}
	return n
}
