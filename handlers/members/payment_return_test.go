package members_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/handlers/server"
)

// TestTestGatewayURLs: the test gateway's addresses are the routes the
// server serves, byte for byte as the engine built them before it got them
// from here.
func TestTestGatewayURLs(t *testing.T) {
	urls := server.TestGatewayURLs("https://portal.example")
	if got, want := urls.PayURL("PR-A/B C"), "https://portal.example/dev/pay/PR-A%2FB%20C"; got != want {
		t.Errorf("PayURL = %q, want %q", got, want)
	}
	if got, want := urls.ReturnURL, "https://portal.example/membership/payment-return"; got != want {
		t.Errorf("ReturnURL = %q, want %q", got, want)
	}
}

// The payment-return address travels in browser history and the
// provider's logs: whoever holds it without being the order's owner learns
// what happened, never names, order lines or amounts. Following it again
// settles nothing twice.
func TestPaymentReturnShowsDetailsOnlyToTheOwner(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		owner := env.NewClient()
		f := env.CompleteDemo(owner)
		pay := env.Checkout(owner, *f.PaymentURL)
		decided := env.Post(owner, pay.Path, url.Values{"status": {"success"}})
		ret, err := url.Parse(decided.Header.Get("Location"))
		if decided.Status != http.StatusSeeOther || err != nil {
			t.Fatalf("gateway: %d %q", decided.Status, decided.Header.Get("Location"))
		}
		other := env.NewClient()
		env.Login(other, "demo-1")
		personal := []string{"Alex", "Robin", "Morgan", "184", "CHF", "EUR"}
		for _, tc := range []struct {
			name   string
			client *http.Client
			owner  bool
		}{
			{"no session (first, settles)", env.NewClient(), false},
			{"another user key", other, false},
			{"the owner", owner, true},
			{"no session again", env.NewClient(), false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p := env.Get(tc.client, ret.RequestURI())
				if p.Status != http.StatusOK || p.TestID("payment-return").AttrOr("data-outcome", "") != "success" {
					t.Fatalf("return page: %d, outcome %q", p.Status, p.TestID("payment-return").AttrOr("data-outcome", ""))
				}
				main := p.Doc.Find("main").Text()
				if tc.owner {
					if p.TestID("order-lines").Length() == 0 || p.TestID("details-hidden").Length() != 0 {
						t.Fatalf("the owner does not see the order:\n%s", main)
					}
					return
				}
				for _, s := range personal {
					if strings.Contains(main, s) {
						t.Errorf("the page shows %q to someone who is not the owner:\n%s", s, main)
					}
				}
				if p.TestID("details-hidden").Length() != 1 || p.TestID("retry-payment").Length() != 0 {
					t.Errorf("want the privacy note and no retry button")
				}
			})
		}
		var paid, confirmations int
		if err := db.NewRaw("SELECT count(*) FROM orders WHERE status = 'Paid'").Scan(t.Context(), &paid); err != nil || paid != 1 {
			t.Fatalf("paid orders: %d %v", paid, err)
		}
		if err := db.NewRaw("SELECT count(*) FROM outbox_messages").Scan(t.Context(), &confirmations); err != nil || confirmations != 1 {
			t.Fatalf("confirmations: %d %v (the return settled twice?)", confirmations, err)
		}
	})
}
