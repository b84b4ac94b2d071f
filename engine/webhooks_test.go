package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
)

// TestWebhookEventRollsBackWithItsChange: an event written in a
// transaction that rolls back leaves neither the event, nor a delivery,
// nor a job; one that commits leaves one delivery per subscribed endpoint
// of its own organisation.
func TestWebhookEventRollsBackWithItsChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(testSealer{}))
		if _, _, err := demo.Svc.CreateWebhookEndpoint(ctx, 1, engine.WebhookEndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentSucceeded}}); err != nil {
			t.Fatal(err)
		}
		if err := engine.EmitThenRollBack(ctx, db, 1, engine.EventPaymentSucceeded, time.Now()); err == nil {
			t.Fatal("the change did not fail")
		}
		count := func(table string) int64 {
			n, err := db.NewSelect().Table(table).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, table := range []string{"webhook_events", "webhook_deliveries", "jobs"} {
			if n := count(table); n != 0 {
				t.Fatalf("%s has %d rows after the rollback", table, n)
			}
		}
		demo.Commit(1) // registration.committed: not subscribed
		if n := count("webhook_events"); n != 0 {
			t.Fatalf("an event nobody subscribed to was written (%d)", n)
		}
	})
}
