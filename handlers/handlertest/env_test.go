package handlertest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

// TestEnvWalksTheDemoToPaid: the harness every handlers test builds on
// serves the demo through the real router: a household signs in, answers
// every step through the form API, pays at the test gateway, and the
// database holds the order paid; and a session-less request is refused in
// the spec's error shape.
func TestEnvWalksTheDemoToPaid(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewEnv(t, db)
		c := env.NewClient()
		done := env.CompleteDemo(c)
		if done.PaymentURL == nil || *done.PaymentURL == "" {
			t.Fatalf("the committed form has no pay link: %+v", done)
		}
		pay, err := url.Parse(*done.PaymentURL)
		if err != nil {
			t.Fatal(err)
		}
		if p := env.FollowPayment(c, pay, "success"); p.Status != http.StatusOK {
			t.Fatalf("the return from the gateway: %d", p.Status)
		}
		var paid int
		if err := db.NewSelect().Model((*engine.Order)(nil)).ColumnExpr("count(*)").
			Where("user_key = ? AND status = ?", engine.DemoUserKey, engine.OrderPaid).Scan(t.Context(), &paid); err != nil {
			t.Fatal(err)
		}
		if paid != 1 {
			t.Fatalf("%d paid orders of the demo household, want 1", paid)
		}
		anon := env.NewClient()
		res := env.Do(anon, http.MethodPost, "/api/forms/next", map[string]any{"processId": done.ProcessID, "step": 1})
		handlertest.ExpectHTTPError(t, res, http.StatusUnauthorized, "/api/forms/next")
	})
}
