package engine_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/registration"
)

func TestWholeFlow(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		svc := enginetest.Seeded(t, db)
		form, created, err := registration.Of(svc).LoadMembershipForm(ctx, "demo", 1, nil)
		if err != nil || !created {
			t.Fatalf("load: %v created=%v", err, created)
		}
		if form.State != engine.StateInit || form.Step != 0 || len(form.People) != 4 {
			t.Fatalf("initial form: %+v", form)
		}
		pid := form.ProcessIDString()
		form, err = registration.Of(svc).Next(ctx, "demo", registration.NextInput{ProcessID: pid, Step: 0, People: []registration.PersonInput{{ID: 1}, {ID: 3}}})
		if err != nil {
			t.Fatalf("select: %v", err)
		}
		if form.State != engine.StateRunning || form.Step != 1 || form.Question.Type != "TXT" {
			t.Fatalf("after select: %+v", form)
		}
		answers := map[int][]registration.PersonInput{
			1: {{ID: 1, Answer: enginetest.Str("0612345678")}, {ID: 3, Answer: enginetest.Str("0612345678")}},
			2: {{ID: 1, Answer: enginetest.Str("M")}, {ID: 3, Answer: enginetest.Str("S")}},
			3: {{ID: 1, Answer: enginetest.Str("1")}, {ID: 3, Answer: enginetest.Str("0")}},
			4: {{ID: 1, Answer: enginetest.Str("1")}, {ID: 3}}, // person 1 transfers: transfer_club asks them only
			5: {{ID: 1, Answer: enginetest.Str("Old Club")}},
			6: {{ID: 3, Answer: enginetest.Str("1")}},
			7: {{ID: 1, Answer: enginetest.Str("1")}, {ID: 3, Answer: enginetest.Str("0")}},
			8: {{ID: 1, Answer: enginetest.Str("1")}, {ID: 3, Answer: enginetest.Str("1")}},
		}
		for step := 1; step <= 8; step++ {
			form, err = registration.Of(svc).Next(ctx, "demo", registration.NextInput{ProcessID: pid, Step: step, People: answers[step]})
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if form.State != engine.StateDone || form.PaymentURL == "" {
			t.Fatalf("done: %+v", form)
		}
		t.Logf("payment url %s", form.PaymentURL)
	})
}

// TestTestGatewayAddresses: the test gateway adds only the query to the
// addresses its caller gives it, and signs the amount paid with the rest.
func TestTestGatewayAddresses(t *testing.T) {
	gw := payment.NewTestGateway(payment.TestGatewayURLs{
		PayURL:    func(reference string) string { return "https://pay.example/p/" + reference },
		ReturnURL: "https://portal.example/back",
	})
	co, err := gw.CreateCheckout(context.Background(), engine.CheckoutRequest{Reference: "PR-1", AmountMinor: 1250, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://pay.example/p/PR-1?amount=12.50&currency=EUR&reference=PR-1"; co.URL != want {
		t.Errorf("CreateCheckout URL = %q, want %q", co.URL, want)
	}
	if co.ProviderID == "" || co.ExpiresAt.IsZero() {
		t.Errorf("checkout = %+v, want a provider id and an expiry", co)
	}
	ret := gw.ReturnURL("PR-1", string(engine.OutcomeSuccess), "TX-1", 1250, "EUR")
	if want := "https://portal.example/back?amount=12.50&currency=EUR&reference=PR-1&signature=" + gw.Sign("PR-1", string(engine.OutcomeSuccess), "TX-1", "12.50", "EUR") +
		"&status=success&transactionId=TX-1"; ret != want {
		t.Errorf("ReturnURL = %q, want %q", ret, want)
	}
	// Each gateway has a key of its own: another one's signature is worthless.
	other := payment.NewTestGateway(payment.TestGatewayURLs{PayURL: func(string) string { return "" }})
	if gw.Sign("PR-1", "success", "TX-1", "12.50", "EUR") == other.Sign("PR-1", "success", "TX-1", "12.50", "EUR") {
		t.Error("two test gateways sign alike: the key is not random")
	}
}
