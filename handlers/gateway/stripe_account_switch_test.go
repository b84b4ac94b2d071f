package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v86"
	"github.com/stripe/stripe-go/v86/webhook"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/engine/stripepay/stripemock"
	"portal/handlers/handlertest"
)

// stripeCall is one request the portal made to the Stripe API.
type stripeCall struct{ Method, Path, Key string }

// stripeRecorder stands between the portal and stripe-mock and notes
// which key each call used.
type stripeRecorder struct {
	mu    sync.Mutex
	calls []stripeCall
}

func (r *stripeRecorder) start(t *testing.T, apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.calls = append(r.calls, stripeCall{req.Method, req.URL.Path, strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")})
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// keysOf are the keys of the calls to path, in order.
func (r *stripeRecorder) keysOf(method, path string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c.Method == method && strings.HasPrefix(c.Path, path) {
			out = append(out, c.Key)
		}
	}
	return out
}

// TestStripeAccountSwitch: a club changes its Stripe keys (another account)
// while a member's checkout made with the first keys is open. The
// checkout's completion, sent by the first account's endpoint and signed
// with its secret, still settles it; signed with the new secret it settles
// nothing (an event of one account never settles another's checkout); its
// refund goes to the first account, with the first key.
func TestStripeAccountSwitch(t *testing.T) {
	apiURL := stripemock.Start(t)
	// A new secret key with a new webhook endpoint, and a rolled secret key
	// of the same account's endpoint (its webhook secret kept): either way
	// the first key's checkout is settled by its event and refunded with
	// the first key.
	for _, keepWebhookSecret := range []bool{false, true} {
		t.Run(fmt.Sprintf("webhook secret kept %v", keepWebhookSecret), func(t *testing.T) {
			stripeAccountSwitch(t, apiURL, keepWebhookSecret)
		})
	}
}

func stripeAccountSwitch(t *testing.T, apiURL string, keepWebhookSecret bool) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		rec := &stripeRecorder{}
		env := handlertest.NewEnvWith(t, db, handlertest.Options{StripeAPIURL: rec.start(t, apiURL)})
		admin, _ := env.ApiKey(1, organisation.ScopeWrite)
		const firstKey, firstWhsec = stripemock.Key, "whsec_riverside_first"
		const secondKey = "sk_test_riverside_second"
		secondWhsec := "whsec_riverside_second"
		if keepWebhookSecret {
			secondWhsec = firstWhsec
		}
		setKeys := func(key, whsec string) {
			t.Helper()
			res := env.Admin(admin, http.MethodPatch, "/api/admin/payment-settings", map[string]any{"provider": "stripe",
				"stripeSecretKey": key, "stripeWebhookSecret": whsec})
			if res.Status != http.StatusOK {
				t.Fatalf("set Stripe keys: %d %s", res.Status, res.Body)
			}
		}
		setKeys(firstKey, firstWhsec)
		setKeys(firstKey, firstWhsec) // the same keys again retire nothing
		retired := func() int64 {
			n, err := db.NewSelect().Model((*payment.RetiredPaymentAccount)(nil)).Where("organisation_id = 1").Count(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := retired(); n != 0 {
			t.Fatalf("%d retired accounts after setting the same keys again", n)
		}

		c := env.NewClient()
		f := env.CompleteDemo(c)
		u, _ := url.Parse(*f.PaymentURL)
		if follow := env.Do(c, http.MethodGet, u.RequestURI(), nil); follow.Status != http.StatusSeeOther {
			t.Fatalf("pay link: %d", follow.Status)
		}
		if keys := rec.keysOf(http.MethodPost, "/v1/checkout/sessions"); len(keys) != 1 || keys[0] != firstKey {
			t.Fatalf("checkout created with keys %v, want the first key", keys)
		}
		var p engine.Payment
		if err := db.NewSelect().Model(&p).Order("id DESC").Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if p.Account != payment.AccountOf(firstKey) || strings.Contains(p.Account, firstKey) {
			t.Fatalf("payment account %q, want the first key's fingerprint", p.Account)
		}

		// The club moves to another account.
		setKeys(secondKey, secondWhsec)
		if n := retired(); n != 1 {
			t.Fatalf("%d retired accounts after the switch, want 1", n)
		}

		session := map[string]any{"id": *p.ProviderID, "object": "checkout.session", "client_reference_id": p.Reference,
			"metadata": map[string]string{"reference": p.Reference}, "amount_total": p.AmountMinor, "currency": "eur",
			"status": "complete", "payment_status": "paid", "payment_intent": "pi_first_account", "mode": "payment"}
		post := func(id, secret string) (int, string) {
			t.Helper()
			now := time.Now()
			payload, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": "checkout.session.completed", "api_version": stripe.APIVersion,
				"created": now.Unix(), "livemode": false, "data": map[string]any{"object": session}})
			signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: now})
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/webhooks/stripe/riverside", strings.NewReader(string(signed.Payload)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Stripe-Signature", signed.Header)
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
		if !keepWebhookSecret {
			if st, _ := post("evt_wrong_account", secondWhsec); st == http.StatusOK && orderStatus() == engine.OrderPaid {
				t.Fatal("an event signed by the new account settled the first account's checkout")
			}
		}
		if st, _ := post("evt_forged", "whsec_nobody"); st != http.StatusBadRequest {
			t.Fatalf("forged after the switch: %d", st)
		}
		st, word := post("evt_first_account", firstWhsec)
		handlertest.WantEvent(t, st, word, http.StatusOK, "settled")
		if orderStatus() != engine.OrderPaid {
			t.Fatalf("order %s after the first account's event", orderStatus())
		}

		// Staff refund it: the refund goes to the account that took the money.
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("id = ?", p.OrderID).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := staff.Of(env.Engine).RefundPayment(t.Context(), engine.Actor{Name: "treasurer@example.org"}, 1, order.ProcessInstanceID, p.Reference, "test"); err != nil {
			t.Fatalf("refund: %v", err)
		}
		if keys := rec.keysOf(http.MethodPost, "/v1/refunds"); len(keys) != 1 || keys[0] != firstKey {
			t.Fatalf("refund made with keys %v, want the first account's key", keys)
		}
	})
}
