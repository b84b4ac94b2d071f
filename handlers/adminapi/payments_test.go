package adminapi_test

import (
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
	"portal/engine/organisation"
	"portal/engine/stripepay/stripemock"
	"portal/handlers/handlertest"
)

// TestOrganisationStripeAccount: a club with its own Stripe account (set
// through the admin API, keys write-only) takes payments with its own key
// at stripe-mock, and its events are verified with its own webhook secret
// at /webhooks/stripe/{slug}: the environment's address, another club's
// address, another secret and a forged signature settle nothing.
func TestOrganisationStripeAccount(t *testing.T) {
	apiURL := stripemock.Start(t)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnvWith(t, db, handlertest.Options{StripeAPIURL: apiURL})
		key, _ := env.ApiKey(1, organisation.ScopeWrite)
		const clubWhsec = "whsec_riverside_own"
		res := env.Admin(key, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"provider": "stripe",
			"stripeSecretKey": stripemock.Key, "stripeWebhookSecret": clubWhsec})
		if res.Status != http.StatusOK || strings.Contains(string(res.Body), stripemock.Key) || strings.Contains(string(res.Body), clubWhsec) ||
			!strings.Contains(string(res.Body), `"stripeSecretKeySet":true`) {
			t.Fatalf("set Stripe keys: %d %s", res.Status, res.Body)
		}
		if get := env.Admin(key, http.MethodGet, "/api/admin/payment-settings", nil); strings.Contains(string(get.Body), "sk_") || strings.Contains(string(get.Body), "whsec_") {
			t.Fatalf("the settings leak a key: %s", get.Body)
		}

		c := env.NewClient()
		f := env.CompleteDemo(c)
		u, _ := url.Parse(*f.PaymentURL)
		follow := env.Do(c, http.MethodGet, u.RequestURI(), nil)
		if follow.Status != http.StatusSeeOther || !strings.HasPrefix(follow.Header.Get("Location"), "https://checkout.stripe.com/") {
			t.Fatalf("pay link: %d to %q, want the club's Stripe Checkout", follow.Status, follow.Header.Get("Location"))
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
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+path, strings.NewReader(string(signed.Payload)))
			req.Header.Set("Content-Type", "application/json")
			if sign {
				req.Header.Set("Stripe-Signature", signed.Header)
			}
			req.Header.Set("Origin", "https://evil.example") // not a browser check: the signature decides
			r := handlertest.RoundTrip(t, http.DefaultClient, req)
			var body struct{ Status string }
			_ = json.Unmarshal(r.Body, &body)
			return r.Status, body.Status
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
		if st, _ := post("/webhooks/stripe/riverside", "evt_other_secret", handlertest.WebhookSecret, true); st != http.StatusBadRequest {
			t.Errorf("signed with another account's secret: %d", st)
		}
		if st, _ := post("/webhooks/stripe/riverside", "evt_unsigned", clubWhsec, false); st != http.StatusBadRequest {
			t.Errorf("unsigned: %d", st)
		}
		if orderStatus() != engine.OrderUnpaid {
			t.Fatalf("a refused event settled the order")
		}
		st, word := post("/webhooks/stripe/riverside", "evt_club", clubWhsec, true)
		handlertest.WantEvent(t, st, word, http.StatusOK, "settled")
		st, word = post("/webhooks/stripe/riverside", "evt_club", clubWhsec, true)
		handlertest.WantEvent(t, st, word, http.StatusOK, "duplicate")
		if orderStatus() != engine.OrderPaid {
			t.Fatalf("order %s after the club's event", orderStatus())
		}
	})
}
