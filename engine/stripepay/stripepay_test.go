package stripepay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v86"
	"github.com/stripe/stripe-go/v86/webhook"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/stripepay"
	"portal/engine/stripepay/stripemock"
)

// recorded is one API call as it left the adapter.
type recorded struct {
	method, path string
	form         url.Values
	header       http.Header
}

// recordingMock is stripe-mock behind a proxy that keeps every request, so
// that tests read the exact shape the adapter sent.
func recordingMock(t *testing.T) (string, func() []recorded) {
	t.Helper()
	target, _ := url.Parse(stripemock.Start(t))
	var mu sync.Mutex
	var calls []recorded
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		calls = append(calls, recorded{method: r.Method, path: r.URL.Path, form: form, header: r.Header.Clone()})
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []recorded {
		mu.Lock()
		defer mu.Unlock()
		return append([]recorded(nil), calls...)
	}
}

const whsec = "whsec_test_secret"

func newProvider(t *testing.T, apiURL string) *stripepay.Provider {
	t.Helper()
	p, err := stripepay.New(stripepay.Config{SecretKey: stripemock.Key, WebhookSecret: whsec, APIURL: apiURL, MaxNetworkRetries: stripe.Int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request(now time.Time) engine.CheckoutRequest {
	return engine.CheckoutRequest{
		Reference: "PR-ABC", OrderReference: "PO-XYZ", AmountMinor: 7750, Currency: "EUR", Description: "Membership registration, order 7",
		Lines:     []engine.CheckoutLine{{Description: "Adult fee", AmountMinor: 7500}, {Description: "Admin fee", AmountMinor: 250}},
		ReturnURL: "https://portal.example/membership/payment-return?reference=PR-ABC&status=success",
		CancelURL: "https://portal.example/membership/payment-return?reference=PR-ABC&status=cancelled",
		ExpiresAt: now.Add(2 * time.Hour),
	}
}

// TestCreateCheckoutShape: the Checkout Session request as Stripe's API
// (stripe-mock validates it against Stripe's OpenAPI) gets it.
func TestCreateCheckoutShape(t *testing.T) {
	apiURL, calls := recordingMock(t)
	p := newProvider(t, apiURL)
	// The engine asks on the portal's clock (moved by PORTAL_CLOCK in the
	// calendar tests); Stripe is asked in real time, and the expiry comes
	// back on the portal's clock.
	now := clock.Now()
	co, err := p.CreateCheckout(context.Background(), request(now))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if co.ProviderID == "" || !strings.HasPrefix(co.URL, "https://") || co.ExpiresAt.Sub(now.Add(2*time.Hour)).Abs() > 2*time.Second {
		t.Errorf("checkout = %+v, want an id, an https url and an expiry in two hours on the portal's clock", co)
	}
	c := calls()
	if len(c) != 1 || c[0].method != http.MethodPost || c[0].path != "/v1/checkout/sessions" {
		t.Fatalf("calls = %+v, want one POST /v1/checkout/sessions", c)
	}
	f, h := c[0].form, c[0].header
	want := map[string]string{
		"mode": "payment", "client_reference_id": "PR-ABC", "metadata[reference]": "PR-ABC", "metadata[order_reference]": "PO-XYZ",
		"success_url": request(now).ReturnURL, "cancel_url": request(now).CancelURL,
		"line_items[0][price_data][currency]": "eur", "line_items[0][price_data][unit_amount]": "7500",
		"line_items[0][price_data][product_data][name]": "Adult fee", "line_items[0][quantity]": "1",
		"line_items[1][price_data][unit_amount]": "250", "line_items[1][price_data][product_data][name]": "Admin fee",
		"payment_intent_data[metadata][reference]": "PR-ABC",
	}
	if got, err := strconv.ParseInt(f.Get("expires_at"), 10, 64); err != nil || time.Unix(got, 0).Sub(time.Now().Add(2*time.Hour)).Abs() > 2*time.Second {
		t.Errorf("expires_at = %q, want two hours from now in real time", f.Get("expires_at"))
	}
	for k, v := range want {
		if got := f.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if f.Has("line_items[2][quantity]") {
		t.Errorf("more line items than order lines: %v", f)
	}
	if got := h.Get("Idempotency-Key"); got != "checkout-PR-ABC" {
		t.Errorf("Idempotency-Key = %q, want checkout-PR-ABC", got)
	}
	if got := h.Get("Stripe-Version"); got != "2026-08-26.dahlia" {
		t.Errorf("Stripe-Version = %q, want %s", got, "2026-08-26.dahlia")
	}
}

// TestCreateCheckoutWithDiscount: Stripe takes no negative line items, so an
// order with a discount is one item for its total, and the lifetime stays
// within Stripe's 30 minutes to 24 hours.
func TestCreateCheckoutWithDiscount(t *testing.T) {
	now := time.Now()
	req := request(now)
	req.Lines = append(req.Lines, engine.CheckoutLine{Description: "Early bird", AmountMinor: -600})
	req.AmountMinor, req.ExpiresAt = 7150, now.Add(72*time.Hour)
	params := stripepay.CheckoutParams(req, now)
	if len(params.LineItems) != 1 || *params.LineItems[0].PriceData.UnitAmount != 7150 || *params.LineItems[0].PriceData.ProductData.Name != req.Description {
		t.Errorf("line items = %+v, want one item of 7150", params.LineItems)
	}
	if *params.ExpiresAt != now.Add(24*time.Hour).Unix() {
		t.Errorf("expires_at = %d, want 24 h from now", *params.ExpiresAt)
	}
	req.ExpiresAt = now.Add(time.Minute)
	if got := stripepay.CheckoutParams(req, now).ExpiresAt; *got < now.Add(30*time.Minute).Unix() {
		t.Errorf("expires_at = %d, want at least 30 min from now", *got)
	}
}

// TestRetrieveExpireRefund: the other calls reach the right endpoints, and
// what stripe-mock's fixture session says reads as a confirmation.
func TestRetrieveExpireRefund(t *testing.T) {
	apiURL, calls := recordingMock(t)
	p := newProvider(t, apiURL)
	ctx := context.Background()
	co, err := p.CreateCheckout(ctx, request(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	pay := engine.Payment{Reference: "PR-ABC", ProviderID: &co.ProviderID}
	c, err := p.Retrieve(ctx, pay)
	if err != nil {
		t.Fatalf("retrieve: %v", err)
	}
	if c.ProviderID != co.ProviderID || c.Outcome == "" {
		t.Errorf("retrieved = %+v", c)
	}
	if err := p.Expire(ctx, pay); err != nil {
		t.Fatalf("expire: %v", err)
	}
	id, err := p.Refund(ctx, engine.RefundRequest{Reference: "PR-ABC", TransactionID: "pi_123", AmountMinor: 7750, Currency: "EUR"})
	if err != nil || id == "" {
		t.Fatalf("refund = %q, %v", id, err)
	}
	var paths []string
	for _, r := range calls()[1:] {
		paths = append(paths, r.method+" "+r.path)
	}
	want := []string{"GET /v1/checkout/sessions/" + co.ProviderID, "POST /v1/checkout/sessions/" + co.ProviderID + "/expire", "POST /v1/refunds"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Errorf("calls = %q, want %q", paths, want)
	}
	last := calls()[len(calls())-1]
	if last.form.Get("payment_intent") != "pi_123" || last.form.Get("amount") != "7750" || last.header.Get("Idempotency-Key") != "refund-PR-ABC" {
		t.Errorf("refund request = %v %v", last.form, last.header.Get("Idempotency-Key"))
	}
}

// TestProviderDown: a provider that cannot be reached is an error, not a link.
func TestProviderDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer srv.Close()
	if _, err := newProvider(t, srv.URL).CreateCheckout(context.Background(), request(time.Now())); err == nil {
		t.Fatal("create against a failing API: no error")
	}
}

// sessionEvent is a signed Checkout Session event as Stripe sends it.
func sessionEvent(t *testing.T, id, typ string, session map[string]any, at time.Time, secret string) ([]byte, string) {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion,
		"created": at.Unix(), "data": map[string]any{"object": session}})
	if err != nil {
		t.Fatal(err)
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at})
	return signed.Payload, signed.Header
}

// TestParseEvent: signatures, age, API version and event kinds.
func TestParseEvent(t *testing.T) {
	p := newProvider(t, "http://127.0.0.1:1")
	session := map[string]any{"id": "cs_1", "object": "checkout.session", "client_reference_id": "PR-ABC", "amount_total": 7750,
		"currency": "eur", "status": "complete", "payment_status": "paid", "payment_intent": "pi_1"}
	now := time.Now()
	t.Run("completed and paid", func(t *testing.T) {
		c, err := p.ParseEvent(sessionEvent(t, "evt_1", stripepay.EventCompleted, session, now, whsec))
		if err != nil || c == nil {
			t.Fatalf("parse: %v %v", c, err)
		}
		want := engine.PaymentConfirmation{Reference: "PR-ABC", ProviderID: "cs_1", TransactionID: "pi_1", Outcome: engine.OutcomeSuccess,
			AmountMinor: 7750, Currency: "EUR", EventID: "evt_1", EventType: stripepay.EventCompleted}
		if *c != want {
			t.Errorf("confirmation = %+v\nwant %+v", *c, want)
		}
	})
	outcomes := []struct {
		name, typ, payStatus, status string
		want                         engine.PaymentOutcome
	}{
		{"completed, unpaid (SEPA debit)", stripepay.EventCompleted, "unpaid", "complete", engine.OutcomePending},
		{"async succeeded", stripepay.EventAsyncSucceeded, "paid", "complete", engine.OutcomeSuccess},
		{"async failed", stripepay.EventAsyncFailed, "unpaid", "complete", engine.OutcomeFailed},
		{"expired", stripepay.EventExpired, "unpaid", "expired", engine.OutcomeCancelled},
	}
	for _, tc := range outcomes {
		t.Run(tc.name, func(t *testing.T) {
			s := map[string]any{}
			for k, v := range session {
				s[k] = v
			}
			s["payment_status"], s["status"] = tc.payStatus, tc.status
			c, err := p.ParseEvent(sessionEvent(t, "evt_x", tc.typ, s, now, whsec))
			if err != nil || c == nil || c.Outcome != tc.want {
				t.Fatalf("parse = %+v, %v; want outcome %s", c, err, tc.want)
			}
		})
	}
	refused := []struct {
		name             string
		payload          func() ([]byte, string)
		wantForged       bool
		wantIgnoredNoErr bool
	}{
		{name: "signed with another secret", wantForged: true, payload: func() ([]byte, string) {
			return sessionEvent(t, "evt_2", stripepay.EventCompleted, session, now, "whsec_other")
		}},
		{name: "body edited after signing", wantForged: true, payload: func() ([]byte, string) {
			b, h := sessionEvent(t, "evt_3", stripepay.EventCompleted, session, now, whsec)
			return []byte(strings.Replace(string(b), "7750", "1", 1)), h
		}},
		{name: "replayed after the tolerance", wantForged: true, payload: func() ([]byte, string) {
			return sessionEvent(t, "evt_4", stripepay.EventCompleted, session, now.Add(-time.Hour), whsec)
		}},
		{name: "no signature", wantForged: true, payload: func() ([]byte, string) {
			b, _ := sessionEvent(t, "evt_5", stripepay.EventCompleted, session, now, whsec)
			return b, ""
		}},
		{name: "an event kind the portal does not act on", wantIgnoredNoErr: true, payload: func() ([]byte, string) {
			return sessionEvent(t, "evt_6", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}, now, whsec)
		}},
		{name: "a session of another system", wantIgnoredNoErr: true, payload: func() ([]byte, string) {
			s := map[string]any{"id": "cs_9", "object": "checkout.session", "amount_total": 1, "currency": "eur", "status": "complete", "payment_status": "paid"}
			return sessionEvent(t, "evt_7", stripepay.EventCompleted, s, now, whsec)
		}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c, err := p.ParseEvent(tc.payload())
			switch {
			case tc.wantForged && !errors.Is(err, engine.ErrForgedEvent):
				t.Errorf("parse = %+v, %v; want ErrForgedEvent", c, err)
			case tc.wantIgnoredNoErr && (err != nil || c != nil):
				t.Errorf("parse = %+v, %v; want nil, nil", c, err)
			}
		})
	}
}
