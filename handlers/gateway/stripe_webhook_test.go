package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v86"
	"github.com/stripe/stripe-go/v86/webhook"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/stripepay"
	"portal/engine/stripepay/stripemock"
	"portal/handlers/handlertest"
)

// stripeCase is a registration committed on a portal that pays at Stripe
// (stripe-mock), its pay link followed once: the attempt is open.
type stripeCase struct {
	env  *handlertest.Env
	c    *http.Client
	pid  string
	link string
	pay  engine.Payment
}

func newStripeCase(t *testing.T, db *bun.DB, apiURL string) *stripeCase {
	t.Helper()
	p, err := stripepay.New(stripepay.Config{SecretKey: stripemock.Key, WebhookSecret: handlertest.WebhookSecret, APIURL: apiURL, MaxNetworkRetries: stripe.Int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	env := handlertest.NewEnvWith(t, db, handlertest.Options{Provider: p})
	sc := &stripeCase{env: env, c: env.NewClient()}
	f := env.CompleteDemo(sc.c)
	if f.PaymentURL == nil {
		t.Fatalf("no payment url: %+v", f)
	}
	sc.pid, sc.link = f.ProcessID, *f.PaymentURL
	u, _ := url.Parse(sc.link)
	res := env.Do(sc.c, http.MethodGet, u.RequestURI(), nil)
	if res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "https://checkout.stripe.com/") {
		t.Fatalf("pay link: %d to %q, want 303 to Stripe Checkout", res.Status, res.Header.Get("Location"))
	}
	if err := db.NewSelect().Model(&sc.pay).Order("id DESC").Limit(1).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sc.pay.ProviderID == nil || sc.pay.Provider != "stripe" || sc.pay.Status != engine.PaymentPending {
		t.Fatalf("attempt = %+v", sc.pay)
	}
	return sc
}

// session is the attempt's Checkout Session as an event carries it.
func (sc *stripeCase) session(status, paymentStatus string, amount int64) map[string]any {
	return map[string]any{"id": *sc.pay.ProviderID, "object": "checkout.session", "client_reference_id": sc.pay.Reference,
		"metadata": map[string]string{"reference": sc.pay.Reference}, "amount_total": amount, "currency": "eur",
		"status": status, "payment_status": paymentStatus, "payment_intent": "pi_" + sc.pay.Reference, "mode": "payment"}
}

// post sends a signed event and returns the status and the answer's status word.
func (sc *stripeCase) post(t *testing.T, id, typ string, session map[string]any, at time.Time, secret string) (int, string) {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion,
		"created": at.Unix(), "livemode": false, "data": map[string]any{"object": session}})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at})
	req, _ := http.NewRequest(http.MethodPost, sc.env.Server.URL+"/webhooks/stripe", strings.NewReader(string(signed.Payload)))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Stripe-Signature", signed.Header)
	res := handlertest.RoundTrip(t, http.DefaultClient, req)
	var body struct{ Status string }
	_ = json.Unmarshal(res.Body, &body)
	return res.Status, body.Status
}

func (sc *stripeCase) orderStatus(t *testing.T) engine.OrderStatus {
	t.Helper()
	var o engine.Order
	if err := sc.env.DB.NewSelect().Model(&o).Where("id = ?", sc.pay.OrderID).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	return o.Status
}

func (sc *stripeCase) attempt(t *testing.T) engine.Payment {
	t.Helper()
	var p engine.Payment
	if err := sc.env.DB.NewSelect().Model(&p).Where("id = ?", sc.pay.ID).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	return p
}

func (sc *stripeCase) count(t *testing.T, model any) int64 {
	t.Helper()
	n, err := sc.env.DB.NewSelect().Model(model).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStripeWebhook: Stripe's events over HTTP, signed with
// webhook.GenerateTestSignedPayload, against an attempt made at stripe-mock.
func TestStripeWebhook(t *testing.T) {
	apiURL := stripemock.Start(t)
	now := time.Now()
	completedPaid := func(sc *stripeCase) map[string]any { return sc.session("complete", "paid", sc.pay.AmountMinor) }

	t.Run("paid, on SQLite and PostgreSQL", func(t *testing.T) {
		dbtest.Each(t, func(t *testing.T, db *bun.DB) {
			sc := newStripeCase(t, db, apiURL)
			st, w := sc.post(t, "evt_paid", stripepay.EventCompleted, completedPaid(sc), now, handlertest.WebhookSecret)
			handlertest.WantEvent(t, st, w, http.StatusOK, "settled")
			if s := sc.orderStatus(t); s != engine.OrderPaid {
				t.Fatalf("order %s, want Paid", s)
			}
		})
	})

	t.Run("forged", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		for _, tc := range []struct {
			name   string
			secret string
			at     time.Time
		}{{"another secret", "whsec_attacker", now}, {"replayed after the signature's tolerance", handlertest.WebhookSecret, now.Add(-time.Hour)}} {
			st, _ := sc.post(t, "evt_forged", stripepay.EventCompleted, completedPaid(sc), tc.at, tc.secret)
			if st != http.StatusBadRequest {
				t.Errorf("%s: %d, want 400", tc.name, st)
			}
		}
		req, _ := http.NewRequest(http.MethodPost, sc.env.Server.URL+"/webhooks/stripe", strings.NewReader(`{"id":"evt_x","type":"checkout.session.completed"}`))
		if res := handlertest.RoundTrip(t, http.DefaultClient, req); res.Status != http.StatusBadRequest || strings.Contains(string(res.Body), "whsec") {
			t.Errorf("unsigned: %d %s", res.Status, res.Body)
		}
		if s := sc.orderStatus(t); s != engine.OrderUnpaid || sc.count(t, (*engine.PaymentEvent)(nil)) != 0 {
			t.Errorf("a forged event changed something: order %s", s)
		}
	})

	t.Run("replayed event id", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		st, w := sc.post(t, "evt_1", stripepay.EventCompleted, completedPaid(sc), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "settled")
		st, w = sc.post(t, "evt_1", stripepay.EventCompleted, completedPaid(sc), now.Add(time.Second), handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "duplicate")
		if n := sc.count(t, (*engine.OutboxMessage)(nil)); n != 1 {
			t.Errorf("%d confirmations, want 1", n)
		}
		if n := sc.count(t, (*engine.PaymentEvent)(nil)); n != 1 {
			t.Errorf("%d events stored, want 1", n)
		}
	})

	t.Run("out of order", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		// SEPA debit: the async success overtakes "completed, unpaid".
		st, w := sc.post(t, "evt_async", stripepay.EventAsyncSucceeded, completedPaid(sc), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "settled")
		st, w = sc.post(t, "evt_completed", stripepay.EventCompleted, sc.session("complete", "unpaid", sc.pay.AmountMinor), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "duplicate")
		st, w = sc.post(t, "evt_expired", stripepay.EventExpired, sc.session("expired", "unpaid", sc.pay.AmountMinor), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "duplicate")
		if p := sc.attempt(t); p.Status != engine.PaymentSucceeded || sc.orderStatus(t) != engine.OrderPaid {
			t.Errorf("attempt %s, order %s: want SUCCEEDED and Paid", p.Status, sc.orderStatus(t))
		}
	})

	t.Run("wrong amount", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		st, w := sc.post(t, "evt_wrong", stripepay.EventCompleted, sc.session("complete", "paid", sc.pay.AmountMinor-1), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "recorded")
		if p := sc.attempt(t); sc.orderStatus(t) != engine.OrderUnpaid || p.Problem == "" || p.Status != engine.PaymentFailed {
			t.Errorf("attempt %s problem %q, order %s: want FAILED with the problem, Unpaid", p.Status, p.Problem, sc.orderStatus(t))
		}
		ret := sc.env.Get(sc.c, "/membership/payment-return?reference="+sc.pay.Reference+"&status=success")
		if ret.TestID("payment-return").AttrOr("data-outcome", "") != "mismatch" {
			t.Errorf("return page after a mismatch:\n%s", ret.Body)
		}
	})

	t.Run("late: after a reset, refunded", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		if res := sc.env.Do(sc.c, http.MethodPost, "/api/forms/processes/"+sc.pid+"/reset", map[string]any{}); res.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", res.Status, res.Body)
		}
		st, w := sc.post(t, "evt_late", stripepay.EventCompleted, completedPaid(sc), now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "settled")
		if p := sc.attempt(t); p.RefundStatus != engine.RefundDue {
			t.Fatalf("refund %q before its job ran, want it due (the webhook answers without calling Stripe)", p.RefundStatus)
		}
		if n := sc.env.RunJobs(); n != 1 {
			t.Fatalf("%d jobs ran, want the refund", n)
		}
		p := sc.attempt(t)
		if p.Status != engine.PaymentSucceeded || p.RefundStatus != engine.RefundDone || p.RefundID == nil || !strings.HasPrefix(*p.RefundID, "re_") {
			t.Errorf("late payment: %s refund %q %v, want SUCCEEDED and refunded at Stripe", p.Status, p.RefundStatus, p.RefundID)
		}
		if n := sc.count(t, (*engine.OutboxMessage)(nil)); n != 0 {
			t.Errorf("%d confirmations for a cancelled order", n)
		}
	})

	t.Run("unknown attempt", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		s := completedPaid(sc)
		s["client_reference_id"] = "PR-NOTOURS"
		st, w := sc.post(t, "evt_other", stripepay.EventCompleted, s, now, handlertest.WebhookSecret)
		handlertest.WantEvent(t, st, w, http.StatusOK, "ignored")
	})

	t.Run("the return page shows what the webhook settled", func(t *testing.T) {
		sc := newStripeCase(t, dbtest.SQLite(t), apiURL)
		path := "/membership/payment-return?reference=" + sc.pay.Reference + "&status=success"
		confirming := sc.env.Get(sc.c, path)
		sec := confirming.TestID("payment-return")
		if sec.AttrOr("data-outcome", "") != "pending" || sec.AttrOr("hx-get", "") == "" || confirming.TestID("check-again").AttrOr("href", "") == "" {
			t.Fatalf("before the webhook, want the confirming page:\n%s", confirming.Body)
		}
		if s := sc.orderStatus(t); s != engine.OrderUnpaid {
			t.Fatalf("the return's query settled the order: %s", s)
		}
		back := sc.env.Get(sc.c, "/membership/payment-return?reference="+sc.pay.Reference+"&status=cancelled")
		if back.TestID("payment-return").AttrOr("data-outcome", "") != "cancelled" || back.TestID("retry-payment").Length() != 1 {
			t.Errorf("back from Stripe without paying, want not completed with a retry:\n%s", back.Body)
		}
		if p := sc.attempt(t); p.Status != engine.PaymentPending {
			t.Errorf("the cancel return changed the attempt: %s", p.Status)
		}
		sc.post(t, "evt_done", stripepay.EventCompleted, completedPaid(sc), now, handlertest.WebhookSecret)
		done := sc.env.Get(sc.c, confirming.TestID("check-again").AttrOr("href", ""))
		if done.TestID("payment-return").AttrOr("data-outcome", "") != "success" {
			t.Errorf("after the webhook:\n%s", done.Body)
		}
	})
}
