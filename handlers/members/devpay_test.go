package members_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/handlers/members"
)

// TestTestGatewayOnlyForTheOwner: the test gateway signs whatever outcome it
// is told, so only the member who registered may use it or see the order.
func TestTestGatewayOnlyForTheOwner(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	owner := env.NewClient()
	f := env.CompleteDemo(owner)
	pay := env.Checkout(owner, *f.PaymentURL)
	stranger := env.NewClient()
	for _, tc := range []struct {
		name   string
		client *http.Client
		status int
	}{
		{"no session", stranger, http.StatusUnauthorized},
		{"another user key", func() *http.Client { c := env.NewClient(); env.Login(c, "demo-1"); return c }(), http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := env.Do(tc.client, http.MethodGet, pay.RequestURI(), nil); res.Status != tc.status {
				t.Fatalf("page: %d, want %d", res.Status, tc.status)
			}
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+pay.Path, strings.NewReader("status=success"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status || res.Header.Get("Location") != "" {
				t.Fatalf("decide: %d to %q, want %d", res.StatusCode, res.Header.Get("Location"), tc.status)
			}
		})
	}
	var paid int
	if err := env.DB.NewRaw("SELECT count(*) FROM orders WHERE status = 'Paid'").Scan(t.Context(), &paid); err != nil || paid != 0 {
		t.Fatalf("paid orders: %d %v", paid, err)
	}
}

// TestTestGatewayDecidesPendingOnly: a settled attempt is not decided again
// (no second signed return for it), even by its owner.
func TestTestGatewayDecidesPendingOnly(t *testing.T) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	owner := env.NewClient()
	f := env.CompleteDemo(owner)
	pay := env.Checkout(owner, *f.PaymentURL)
	if failed := env.FollowPayment(owner, pay, "failed"); failed.TestID("payment-return").AttrOr("data-outcome", "") != "failed" {
		t.Fatalf("first decision:\n%s", failed.Body)
	}
	again := env.Post(owner, pay.Path, url.Values{"status": {"success"}})
	if again.Status != http.StatusConflict || again.Header.Get("Location") != "" {
		t.Fatalf("deciding a settled attempt: %d to %q, want 409", again.Status, again.Header.Get("Location"))
	}
	if closed := env.Get(owner, pay.RequestURI()); closed.TestID("pay-closed").Length() != 1 {
		t.Errorf("the page of a settled attempt offers to pay:\n%s", closed.Body)
	}
}

// TestTestGatewayOnlyForThisMachine: the test gateway answers only to
// clients on this machine, whatever interface the portal listens on.
func TestTestGatewayOnlyForThisMachine(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:5000": true, "[::1]:5000": true, "[::ffff:127.0.0.1]:5000": true,
		"192.0.2.7:5000": false, "[2001:db8::1]:5000": false, "garbage": false} {
		r := httptest.NewRequest(http.MethodGet, "/dev/pay/PR-X", nil)
		r.RemoteAddr = addr
		if got := members.LoopbackPeer(r); got != want {
			t.Errorf("%s: loopback %v, want %v", addr, got, want)
		}
	}
}
