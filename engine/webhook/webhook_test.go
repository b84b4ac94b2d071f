package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/webhook"
)

// TestWebhookEventRollsBackWithItsChange: an event written in a
// transaction that rolls back leaves neither the event, nor a delivery,
// nor a job; one that commits leaves one delivery per subscribed endpoint
// of its own organisation.
func TestWebhookEventRollsBackWithItsChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		if _, _, err := webhook.Of(demo.Svc).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, webhook.EndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentSucceeded}}); err != nil {
			t.Fatal(err)
		}
		if err := emitThenRollBack(ctx, db, 1, engine.EventPaymentSucceeded, clock.Now()); err == nil {
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

// webhookEventsOf reads the events written for an organisation, oldest
// first, as type and envelope.
func webhookEventsOf(t *testing.T, db *bun.DB, orgID int64) []engine.WebhookEnvelope {
	t.Helper()
	var bodies []string
	if err := db.NewSelect().Table("webhook_events").Column("body").Where("organisation_id = ?", orgID).Order("id").
		Scan(context.Background(), &bodies); err != nil {
		t.Fatal(err)
	}
	out := make([]engine.WebhookEnvelope, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal([]byte(b), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestPaymentFailedAndMembershipActivated: an attempt the provider refuses
// announces payment.failed (once, a replayed return adds nothing) and
// activates nothing; paying then announces payment.succeeded and
// membership.activated with each activated membership.
func TestPaymentFailedAndMembershipActivated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		if _, _, err := webhook.Of(demo.Svc).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, webhook.EndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentSucceeded, engine.EventPaymentFailed, engine.EventMembershipActivated}}); err != nil {
			t.Fatal(err)
		}
		form := demo.Commit(1, 2)
		if res := demo.PayWith(form, engine.OutcomeFailed); res.Outcome != engine.OutcomeFailed {
			t.Fatalf("outcome %s, want failed", res.Outcome)
		}
		demo.PayWith(form, engine.OutcomeFailed) // the same return again
		evs := webhookEventsOf(t, db, 1)
		if len(evs) != 1 || evs[0].Type != engine.EventPaymentFailed {
			t.Fatalf("after a failed payment and its replay: %+v", evs)
		}
		var failed engine.PaymentEventData
		if err := json.Unmarshal(evs[0].Data, &failed); err != nil {
			t.Fatal(err)
		}
		if failed.Outcome != "failed" || failed.Reference == "" || failed.OrderID == 0 || failed.RegistrationID != form.ProcessID || failed.AmountMinor <= 0 {
			t.Fatalf("payment.failed data: %s", evs[0].Data)
		}

		demo.Pay(form)
		evs = webhookEventsOf(t, db, 1)
		if len(evs) != 3 || evs[1].Type != engine.EventPaymentSucceeded || evs[2].Type != engine.EventMembershipActivated {
			t.Fatalf("after paying: %+v", evs)
		}
		var activated engine.MembershipEventData
		if err := json.Unmarshal(evs[2].Data, &activated); err != nil {
			t.Fatal(err)
		}
		if activated.RegistrationID != form.ProcessID || activated.OrderID != failed.OrderID || activated.UserKey != engine.DemoUserKey ||
			len(activated.Memberships) != 2 || activated.Memberships[0].PersonID != 1 || activated.Memberships[1].PersonID != 2 {
			t.Fatalf("membership.activated data: %s", evs[2].Data)
		}
		active, err := db.NewSelect().Table("memberships").Where("process_instance_id = ? AND status = ?", form.ProcessID, engine.MembershipActive).Count(ctx)
		if err != nil || active != 2 || activated.Memberships[0].MembershipID == 0 {
			t.Fatalf("%d active memberships (%v)", active, err)
		}
		demo.Pay(form) // replayed: nothing new
		if n := len(webhookEventsOf(t, db, 1)); n != 3 {
			t.Fatalf("a replayed payment return wrote events: %d", n)
		}
	})
}

// TestPaymentCancelledIsAnnouncedAsFailed: an expired or cancelled
// checkout is payment.failed with outcome cancelled.
func TestPaymentCancelledIsAnnouncedAsFailed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		if _, _, err := webhook.Of(demo.Svc).CreateWebhookEndpoint(context.Background(), engine.CommandLine, 1, webhook.EndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentFailed}}); err != nil {
			t.Fatal(err)
		}
		demo.PayWith(demo.Commit(1), engine.OutcomeCancelled)
		evs := webhookEventsOf(t, db, 1)
		var data engine.PaymentEventData
		if len(evs) != 1 || json.Unmarshal(evs[0].Data, &data) != nil || data.Outcome != "cancelled" {
			t.Fatalf("events: %+v", evs)
		}
	})
}

// TestPruneWebhookEvents: delivered events older than the retention go
// with their deliveries; younger ones and undelivered ones, however old,
// stay.
func TestPruneWebhookEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		ep, _, err := webhook.Of(demo.Svc).CreateWebhookEndpoint(ctx, engine.CommandLine, 1, webhook.EndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentSucceeded}})
		if err != nil {
			t.Fatal(err)
		}
		now := clock.Now().UTC()
		for _, age := range []time.Duration{40 * 24 * time.Hour, 40 * 24 * time.Hour, 10 * 24 * time.Hour} {
			if err := emitAt(ctx, db, 1, engine.EventPaymentSucceeded, now.Add(-age)); err != nil {
				t.Fatal(err)
			}
		}
		list, err := webhook.Of(demo.Svc).Deliveries(ctx, 1, ep.ID, 10) // newest first
		if err != nil || len(list) != 3 {
			t.Fatalf("deliveries: %+v, %v", list, err)
		}
		oldDelivered, oldFailed, young := list[2], list[1], list[0]
		for _, d := range []webhook.Delivery{oldDelivered, young} {
			if err := webhook.Of(demo.Svc).RecordAttempt(ctx, d.ID, webhook.AttemptResult{Status: engine.DeliveryDelivered, ResponseCode: 200}); err != nil {
				t.Fatal(err)
			}
		}
		if err := webhook.Of(demo.Svc).RecordAttempt(ctx, oldFailed.ID, webhook.AttemptResult{Status: engine.DeliveryFailed, ResponseCode: 500}); err != nil {
			t.Fatal(err)
		}
		n, err := webhook.PruneWebhookEvents(ctx, db, now, webhook.DefaultWebhookRetention)
		if err != nil || n != 1 {
			t.Fatalf("pruned %d (%v), want the old delivered one", n, err)
		}
		left, err := webhook.Of(demo.Svc).Deliveries(ctx, 1, ep.ID, 10)
		if err != nil || len(left) != 2 || left[0].ID != young.ID || left[1].ID != oldFailed.ID {
			t.Fatalf("left: %+v, %v", left, err)
		}
		if k, err := db.NewSelect().Table("webhook_events").Count(ctx); err != nil || k != 2 {
			t.Fatalf("%d events left (%v)", k, err)
		}
		if n, err := webhook.PruneWebhookEvents(ctx, db, now, webhook.DefaultWebhookRetention); err != nil || n != 0 {
			t.Fatalf("second run pruned %d (%v)", n, err)
		}
	})
}

// TestWebhookEndpointChangesAudited: adding, changing, rotating the secret
// of and deleting an endpoint each write an audit entry with the values
// before and after; the secret shows only as a fingerprint that changes
// with a rotation.
func TestWebhookEndpointChangesAudited(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		demo := enginetest.Seed(t, db, engine.WithSecretSealer(enginetest.Sealer{}))
		actor := engine.Actor{Name: "admin@example.org"} // a role from the IdP's claim: no staff record
		ep, secret, err := webhook.Of(demo.Svc).CreateWebhookEndpoint(ctx, actor, 1, webhook.EndpointInput{URL: "https://hooks.example/a",
			Events: []string{engine.EventPaymentSucceeded}})
		if err != nil {
			t.Fatal(err)
		}
		off := false
		if _, err := webhook.Of(demo.Svc).UpdateWebhookEndpoint(ctx, actor, 1, ep.ID, webhook.EndpointChange{Active: &off}); err != nil {
			t.Fatal(err)
		}
		rotated, err := webhook.Of(demo.Svc).RotateWebhookSecret(ctx, actor, 1, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := webhook.Of(demo.Svc).DeleteWebhookEndpoint(ctx, actor, 1, ep.ID); err != nil {
			t.Fatal(err)
		}
		if err := webhook.Of(demo.Svc).DeleteWebhookEndpoint(ctx, actor, 2, ep.ID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("deleting again: %v, want not found", err)
		}
		log, err := demo.Svc.AuditLog(ctx, engine.AuditQuery{OrganisationID: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"webhook.delete", "webhook.rotate_secret", "webhook.update", "webhook.create"}
		if len(log) != len(want) {
			t.Fatalf("%d audit entries, want %d: %+v", len(log), len(want), log)
		}
		for i, r := range log {
			if r.Action != want[i] || r.Actor != actor.Name {
				t.Errorf("entry %d: %s by %s, want %s by %s", i, r.Action, r.Actor, want[i], actor.Name)
			}
			for _, raw := range []string{r.BeforeJSON, r.AfterJSON} {
				if secret != "" && (strings.Contains(raw, secret) || strings.Contains(raw, rotated)) {
					t.Errorf("entry %s holds a secret: %s", r.Action, raw)
				}
			}
		}
		var before, after struct{ Secret string }
		json.Unmarshal([]byte(log[1].BeforeJSON), &before)
		json.Unmarshal([]byte(log[1].AfterJSON), &after)
		if before.Secret == "" || before.Secret == after.Secret {
			t.Errorf("rotation shows the secret as %q before and %q after, want two fingerprints", before.Secret, after.Secret)
		}
		if log[0].AfterJSON != "null" && log[0].AfterJSON != "" {
			t.Errorf("delete's after: %s, want none", log[0].AfterJSON)
		}
	})
}

// emitThenRollBack writes an event in a transaction that then fails, as a
// change that rolls back after announcing itself would.
func emitThenRollBack(ctx context.Context, db *bun.DB, orgID int64, eventType string, now time.Time) error {
	return engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if err := engine.EmitEvent(ctx, tx, orgID, eventType, map[string]int{"n": 1}, now); err != nil {
			return err
		}
		return errors.New("the change failed after its event")
	})
}

// emitAt writes and commits an event as of now.
func emitAt(ctx context.Context, db *bun.DB, orgID int64, eventType string, now time.Time) error {
	return engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		return engine.EmitEvent(ctx, tx, orgID, eventType, map[string]int{"n": 1}, now)
	})
}
