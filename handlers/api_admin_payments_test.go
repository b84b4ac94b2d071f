package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v86"
	"github.com/stripe/stripe-go/v86/webhook"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/registration"
	"portal/engine/stripepay/stripemock"
)

// checkAdminPaymentResponses walks the admin API's payment routes for
// TestOpenAPIResponses: organisation 1 switches to bank transfer, a
// registration commits, staff capture part of it, the member resets, the
// whole transfer arrives anyway and is owed back, staff mark it paid back.
// It runs while organisation 1 is the only one (its pages resolve).
func checkAdminPaymentResponses(t *testing.T, ck *apiChecker, env *testEnv, anon *http.Client, crossSite []string) {
	t.Helper()
	write, _ := env.apiKey(1, organisation.ScopeWrite)
	read, _ := env.apiKey(1, organisation.ScopeRead)
	settings := "/api/admin/payment-settings"
	wantStatus(t, ck.conforming(anon, http.MethodGet, settings, nil, bearer(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, settings, nil), http.StatusUnauthorized)
	bank := map[string]any{"provider": "bank_transfer", "bankCreditorName": "Riverside Rowing Club", "bankIban": "AT61 1904 3002 3457 3201"}
	wantStatus(t, ck.do(anon, http.MethodPatch, settings, bank, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, settings, bank, bearer(write, crossSite...)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, settings, bank), http.StatusUnauthorized)
	wantStatus(t, ck.do(anon, http.MethodPatch, settings, `{"provider":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPatch, settings, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	bad := ck.conforming(anon, http.MethodPatch, settings, map[string]any{"provider": "stripe", "bankIban": "DE00 3704 0044 0532 0130 00"}, bearer(write)...)
	wantStatus(t, bad, http.StatusUnprocessableEntity)
	for _, field := range []string{"stripeSecretKey", "stripeWebhookSecret", "bankIban"} {
		if !strings.Contains(string(bad.body), `"field":"`+field+`"`) {
			t.Errorf("invalid payment settings do not name %s: %s", field, bad.body)
		}
	}
	ok := ck.conforming(anon, http.MethodPatch, settings, bank, bearer(write)...)
	wantStatus(t, ok, http.StatusOK)
	if !strings.Contains(string(ok.body), `"bankIban":"AT611904300234573201"`) {
		t.Fatalf("settings after the change: %s", ok.body)
	}

	// A registration of organisation 1 now pays by bank transfer (Sam,
	// through the engine as the pages would: the demo user's first
	// registration is paid already).
	svc := engine.NewService(env.db, env.gw, orgPayments(env.db, envOptions{}, env.gw)...)
	demo := &enginetest.Demo{T: t, DB: env.db, Svc: svc}
	f := demo.Commit(2)
	u, err := url.Parse(f.PaymentURL)
	if err != nil {
		t.Fatal(err)
	}
	orderRef := strings.TrimPrefix(u.Path, "/pay/")
	var p engine.Payment
	if err := env.db.NewSelect().Model(&p).Where("provider = 'bank_transfer'").Order("id DESC").Limit(1).Scan(context.Background()); err != nil {
		t.Fatalf("no bank transfer attempt: %v", err)
	}
	// Its pay link shows the transfer to the club's own account, not the
	// environment's test gateway.
	if page := env.get(env.newClient(), u.RequestURI()); page.status != http.StatusOK || !strings.Contains(string(page.body), "AT61 1904 3002 3457 3201") {
		t.Fatalf("pay link of a club paid by bank transfer: %d\n%s", page.status, page.body)
	}
	capture := "/api/admin/payments/" + orderRef + "/capture"
	part := ck.conforming(anon, http.MethodPost, capture, map[string]any{"amount": "1.00", "date": "2026-11-20", "note": "first part"}, bearer(write)...)
	wantStatus(t, part, http.StatusOK)
	var res struct{ Result, Problem, Paid string }
	part.json(t, &res)
	if res.Result != "recorded" || res.Problem != "partial" || res.Paid != "EUR 1.00" {
		t.Fatalf("partial capture: %s", part.body)
	}
	wantStatus(t, ck.do(anon, http.MethodPost, capture, map[string]any{"amount": "-1", "date": "20.11.2026"}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, "/api/admin/payments/PR-NOTOURS/capture", map[string]any{"amount": "1.00"}, bearer(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPost, capture, `{"amount":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, capture, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, capture, map[string]any{"amount": "1.00"}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, capture, map[string]any{"amount": "1.00"}), http.StatusUnauthorized)

	// The member resets; the whole transfer arrives anyway: owed back by hand.
	if _, err := registration.Of(svc).Reset(context.Background(), engine.DemoUserKey, f.ProcessIDString()); err != nil {
		t.Fatal(err)
	}
	whole := ck.conforming(anon, http.MethodPost, capture, map[string]any{"amount": engine.FormatAmount(p.AmountMinor), "id": "credit-2"}, bearer(write)...)
	wantStatus(t, whole, http.StatusOK)
	if whole.json(t, &res); res.Result != "refund" {
		t.Fatalf("transfer for a cancelled order: %s", whole.body)
	}
	attention := "/api/admin/payments/attention"
	list := ck.conforming(anon, http.MethodGet, attention, nil, bearer(read)...)
	wantStatus(t, list, http.StatusOK)
	if !strings.Contains(string(list.body), `"action":"refundByHand"`) || !strings.Contains(string(list.body), p.Reference) {
		t.Fatalf("payments needing attention: %s", list.body)
	}
	wantStatus(t, ck.do(anon, http.MethodGet, attention, nil), http.StatusUnauthorized)

	refunded := "/api/admin/payments/" + p.Reference + "/refunded"
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, map[string]any{"note": strings.Repeat("x", 501)}, bearer(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, `{"note":`, bearer(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, "x", bearer(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, map[string]any{}, bearer(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, map[string]any{}), http.StatusUnauthorized)
	wantStatus(t, ck.do(anon, http.MethodPost, "/api/admin/payments/PR-NOTOURS/refunded", map[string]any{}, bearer(write)...), http.StatusNotFound)
	wantStatus(t, ck.conforming(anon, http.MethodPost, refunded, map[string]any{"note": "transferred back"}, bearer(write)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodPost, refunded, map[string]any{}, bearer(write)...), http.StatusConflict)
	if list := ck.do(anon, http.MethodGet, attention, nil, bearer(read)...); strings.TrimSpace(string(list.body)) != "[]" {
		t.Fatalf("still needing attention: %s", list.body)
	}
}

// bearer is the admin API's Authorization header for key, with more headers.
func bearer(key string, more ...string) []string {
	return append([]string{"Authorization", "Bearer " + key}, more...)
}

// TestOrganisationStripeAccount: a club with its own Stripe account (set
// through the admin API, keys write-only) takes payments with its own key
// at stripe-mock, and its events are verified with its own webhook secret
// at /webhooks/stripe/{slug}: the environment's address, another club's
// address, another secret and a forged signature settle nothing.
func TestOrganisationStripeAccount(t *testing.T) {
	apiURL := stripemock.Start(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newEnvWith(t, db, envOptions{stripeAPIURL: apiURL})
		key, _ := env.apiKey(1, organisation.ScopeWrite)
		const clubWhsec = "whsec_riverside_own"
		res := env.admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"provider": "stripe",
			"stripeSecretKey": stripemock.Key, "stripeWebhookSecret": clubWhsec})
		if res.status != http.StatusOK || strings.Contains(string(res.body), stripemock.Key) || strings.Contains(string(res.body), clubWhsec) ||
			!strings.Contains(string(res.body), `"stripeSecretKeySet":true`) {
			t.Fatalf("set Stripe keys: %d %s", res.status, res.body)
		}
		if get := env.admin(key, http.MethodGet, "/api/admin/payment-settings", nil); strings.Contains(string(get.body), "sk_") || strings.Contains(string(get.body), "whsec_") {
			t.Fatalf("the settings leak a key: %s", get.body)
		}

		c := env.newClient()
		f := env.completeDemo(c)
		u, _ := url.Parse(*f.PaymentURL)
		follow := env.do(c, http.MethodGet, u.RequestURI(), nil)
		if follow.status != http.StatusSeeOther || !strings.HasPrefix(follow.header.Get("Location"), "https://checkout.stripe.com/") {
			t.Fatalf("pay link: %d to %q, want the club's Stripe Checkout", follow.status, follow.header.Get("Location"))
		}
		var p engine.Payment
		if err := db.NewSelect().Model(&p).Order("id DESC").Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if p.Provider != "stripe" || p.ProviderID == nil {
			t.Fatalf("attempt %+v: want one at Stripe", p)
		}
		session := map[string]any{"id": *p.ProviderID, "object": "checkout.session", "client_reference_id": p.Reference,
			"metadata": map[string]string{"reference": p.Reference}, "amount_total": p.AmountMinor, "currency": "eur",
			"status": "complete", "payment_status": "paid", "payment_intent": "pi_" + p.Reference, "mode": "payment"}
		post := func(path, id, secret string, sign bool) (int, string) {
			t.Helper()
			now := clock.Now()
			payload, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": "checkout.session.completed", "api_version": stripe.APIVersion,
				"created": now.Unix(), "livemode": false, "data": map[string]any{"object": session}})
			signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: now})
			req, _ := http.NewRequest(http.MethodPost, env.srv.URL+path, strings.NewReader(string(signed.Payload)))
			req.Header.Set("Content-Type", "application/json")
			if sign {
				req.Header.Set("Stripe-Signature", signed.Header)
			}
			req.Header.Set("Origin", "https://evil.example") // not a browser check: the signature decides
			r := roundTrip(t, http.DefaultClient, req)
			var body struct{ Status string }
			_ = json.Unmarshal(r.body, &body)
			return r.status, body.Status
		}
		orderStatus := func() engine.OrderStatus {
			var o engine.Order
			if err := db.NewSelect().Model(&o).Where("id = ?", p.OrderID).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			return o.Status
		}
		// The environment pays with the test gateway: it has no Stripe
		// address at all; an unknown club has none either.
		if st, _ := post("/webhooks/stripe", "evt_env", clubWhsec, true); st != http.StatusNotFound && st != http.StatusMethodNotAllowed {
			t.Errorf("environment's webhook address: %d", st)
		}
		if st, _ := post("/webhooks/stripe/nosuchclub", "evt_unknown", clubWhsec, true); st != http.StatusNotFound {
			t.Errorf("unknown club's address: %d", st)
		}
		if st, _ := post("/webhooks/stripe/riverside", "evt_other_secret", testWhsec, true); st != http.StatusBadRequest {
			t.Errorf("signed with another account's secret: %d", st)
		}
		if st, _ := post("/webhooks/stripe/riverside", "evt_unsigned", clubWhsec, false); st != http.StatusBadRequest {
			t.Errorf("unsigned: %d", st)
		}
		if orderStatus() != engine.OrderUnpaid {
			t.Fatalf("a refused event settled the order")
		}
		st, word := post("/webhooks/stripe/riverside", "evt_club", clubWhsec, true)
		wantEvent(t, st, word, http.StatusOK, "settled")
		st, word = post("/webhooks/stripe/riverside", "evt_club", clubWhsec, true)
		wantEvent(t, st, word, http.StatusOK, "duplicate")
		if orderStatus() != engine.OrderPaid {
			t.Fatalf("order %s after the club's event", orderStatus())
		}
	})
}
