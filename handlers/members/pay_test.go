package members_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v86"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/stripepay"
	"portal/handlers/handlertest"
)

// TestPaymentGenerationFailed: Stripe unreachable at commit: the
// registration is committed anyway, paymentUrl is null, the done page says
// the link follows, and the pay link answers 503 without internals.
func TestPaymentGenerationFailed(t *testing.T) {
	p, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_1", WebhookSecret: handlertest.WebhookSecret, APIURL: "http://127.0.0.1:1", MaxNetworkRetries: stripe.Int64(0)})
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.SQLite(t)
	env := handlertest.NewEnvWith(t, db, handlertest.Options{Provider: p})
	c := env.NewClient()
	f := env.CompleteDemo(c)
	if f.ProcessState != "DONE" || f.PaymentURL != nil {
		t.Fatalf("commit with Stripe down: %s, paymentUrl %v; want DONE without a link", f.ProcessState, f.PaymentURL)
	}
	done := env.Get(c, "/membership/register/1/done")
	if done.TestID("link-follows").Length() != 1 || done.TestID("pay-now").Length() != 0 {
		t.Fatalf("done page without a link:\n%s", done.Body)
	}
	var order engine.Order
	if err := db.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := env.Do(c, http.MethodGet, "/pay/"+url.PathEscape(order.PayReference), nil)
	if res.Status != http.StatusServiceUnavailable {
		t.Errorf("pay link with Stripe down: %d, want 503", res.Status)
	}
	for _, leak := range []string{"127.0.0.1:1", "sk_test", "connection refused"} {
		if strings.Contains(strings.ToLower(string(res.Body)), leak) {
			t.Errorf("the 503 page shows %q", leak)
		}
	}
	if res := env.Do(c, http.MethodGet, "/pay/PO-UNKNOWN", nil); res.Status != http.StatusNotFound {
		t.Errorf("unknown pay link: %d, want 404", res.Status)
	}
}
