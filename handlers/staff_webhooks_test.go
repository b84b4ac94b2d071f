package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/engine/webhook"
)

// TestStaffWebhooksPage: an admin adds an endpoint (a private address and
// no events are refused by their fields, nothing added), sees its secret
// once, switches it off and on, rotates the secret and deletes it after
// confirming; its deliveries are listed with a replay for the ended ones,
// which sends the event again (audited); another organisation's endpoint
// is not found.
func TestStaffWebhooksPage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := t.Context()
		env := newStaffEnv(t, db, envOptions{})
		env.addStaff("admin@example.org", staff.RoleAdmin)
		admin := env.mustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.srv.URL}

		p := env.get(admin, "/staff/webhooks")
		if p.status != http.StatusOK || p.testid("webhooks-empty").Length() != 1 || !strings.Contains(spacedText(p.testid("staff-nav")), "Webhooks") ||
			p.doc.Find(`input[name="events"][checked]`).Length() != len(engine.WebhookEventTypes) {
			t.Fatalf("empty page: %d %s", p.status, p.body)
		}

		bad := env.post(admin, "/staff/webhooks", url.Values{"url": {"https://10.0.0.7/hooks"}, "events": {"payment.succeeded"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.testid("error-url").Text(), "public address") ||
			bad.doc.Find(`#wh-url`).AttrOr("value", "") != "https://10.0.0.7/hooks" || bad.doc.Find(`input[name="events"][checked]`).Length() != 1 {
			t.Fatalf("private address: %d %s", bad.status, bad.testid("webhook-add").Text())
		}
		bad = env.post(admin, "/staff/webhooks", url.Values{"url": {"https://club.example/hooks"}}, origin...)
		if bad.status != http.StatusUnprocessableEntity || bad.testid("error-events").Length() != 1 || bad.testid("webhook-error").Length() != 1 {
			t.Fatalf("no events: %d %s", bad.status, bad.testid("webhook-add").Text())
		}
		if n, _ := db.NewSelect().Model((*engine.WebhookEndpoint)(nil)).Count(ctx); n != 0 {
			t.Fatalf("%d endpoints after refusals", n)
		}

		added := env.post(admin, "/staff/webhooks", url.Values{"url": {"https://club.example/hooks"},
			"events": {"registration.committed", "payment.succeeded"}}, origin...)
		secret := added.testid("webhook-secret-value").Text()
		if added.status != http.StatusOK || !strings.HasPrefix(secret, "whsec_") || added.testid("webhook-row").Length() != 1 ||
			added.testid("webhook-events").Text() != "registration.committed, payment.succeeded" {
			t.Fatalf("add: %d %s", added.status, added.testid("staff-main").Text())
		}
		id := added.testid("webhook-row").AttrOr("data-id", "")
		base := "/staff/webhooks/" + id
		if list := env.get(admin, "/staff/webhooks"); strings.Contains(string(list.body), secret) || list.testid("webhook-state").AttrOr("data-state", "") != "active" {
			t.Fatalf("the list shows the secret again or the endpoint is not active: %s", list.testid("staff-main").Text())
		}

		expectRedirect(t, env.post(admin, base+"/active", url.Values{"active": {"0"}}, origin...), "/staff/webhooks?done=webhook-disabled")
		if list := env.get(admin, "/staff/webhooks?done=webhook-disabled"); list.testid("webhook-state").AttrOr("data-state", "") != "inactive" ||
			list.testid("staff-flash").Length() != 1 || list.testid("webhook-enable").Length() != 1 {
			t.Fatalf("after switching off: %s", list.testid("staff-main").Text())
		}
		expectRedirect(t, env.post(admin, base+"/active", url.Values{"active": {"1"}}, origin...), "/staff/webhooks?done=webhook-enabled")

		ask := env.post(admin, base+"/rotate", url.Values{}, origin...)
		if ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("rotating without confirmation: %d", ask.status)
		}
		rotated := env.post(admin, base+"/rotate", url.Values{"confirmed": {"1"}}, origin...)
		if next := rotated.testid("webhook-secret-value").Text(); rotated.status != http.StatusOK || !strings.HasPrefix(next, "whsec_") || next == secret {
			t.Fatalf("rotate: %d %q", rotated.status, next)
		}

		// Deliveries: a registration announces itself, delivered.
		env.completeDemo(env.newClient())
		epID, _ := strconv.ParseInt(id, 10, 64)
		list, err := webhook.Of(env.svc).Deliveries(ctx, 1, epID, 10)
		if err != nil || len(list) != 1 {
			t.Fatalf("deliveries: %+v %v", list, err)
		}
		if err := webhook.Of(env.svc).RecordAttempt(ctx, list[0].ID, webhook.AttemptResult{Status: engine.DeliveryDelivered, ResponseCode: 200}); err != nil {
			t.Fatal(err)
		}
		dp := env.get(admin, base)
		if dp.status != http.StatusOK || dp.testid("delivery-row").Length() != 1 || dp.testid("delivery-replay").Length() != 1 {
			t.Fatalf("deliveries page: %d %s", dp.status, dp.testid("staff-main").Text())
		}
		delivered := dp.doc.Find(`[data-testid="delivery-row"][data-id="` + strconv.FormatInt(list[0].ID, 10) + `"]`)
		if delivered.Find(`[data-testid="delivery-status"]`).AttrOr("data-status", "") != engine.DeliveryDelivered ||
			delivered.Find(`[data-testid="delivery-type"]`).Text() != engine.EventRegistrationCommitted {
			t.Fatalf("the delivered row: %s", delivered.Text())
		}
		replay := delivered.Find(`form`).AttrOr("action", "")
		expectRedirect(t, env.post(admin, replay, url.Values{}, origin...), base+"?done=webhook-replayed")
		after := env.get(admin, base+"?done=webhook-replayed")
		if after.testid("delivery-row").Length() != 2 || after.testid("staff-flash").Length() != 1 ||
			after.testid("delivery-event").First().Text() != list[0].EventID || after.testid("delivery-replay").Length() != 1 {
			t.Fatalf("after the replay: %s", after.testid("staff-main").Text())
		}
		if n, err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = 'webhook.replay' AND actor = 'admin@example.org'").Count(ctx); err != nil || n != 1 {
			t.Fatalf("%d replays audited (%v)", n, err)
		}
		pending := base + "/deliveries/" + after.testid("delivery-row").First().AttrOr("data-id", "") + "/replay"
		if res := env.post(admin, pending, url.Values{}, origin...); res.status != http.StatusConflict {
			t.Fatalf("replaying a pending delivery: %d", res.status)
		}

		// An endpoint of another organisation, as the database holds it.
		if _, err := db.ExecContext(ctx, "INSERT INTO organisations (id, name, slug, created_at) VALUES (77, 'Other', 'other', ?)", clock.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO webhook_endpoints (id, organisation_id, url, secret_sealed, events, active, disabled_reason, created_at, updated_at) "+
			"VALUES (77, 77, 'https://other.example/h', 'x', 'payment.succeeded', TRUE, '', ?, ?)", clock.Now(), clock.Now()); err != nil {
			t.Fatal(err)
		}
		for _, res := range []page{env.get(admin, "/staff/webhooks/77"), env.post(admin, "/staff/webhooks/77/delete", url.Values{"confirmed": {"1"}}, origin...),
			env.post(admin, "/staff/webhooks/77/active", url.Values{"active": {"0"}}, origin...)} {
			if res.status != http.StatusNotFound {
				t.Fatalf("another organisation's endpoint: %d", res.status)
			}
		}
		if strings.Contains(string(env.get(admin, "/staff/webhooks").body), "other.example") {
			t.Fatal("the list shows another organisation's endpoint")
		}

		ask = env.post(admin, base+"/delete", url.Values{}, origin...)
		if ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("deleting without confirmation: %d", ask.status)
		}
		expectRedirect(t, env.post(admin, base+"/delete", url.Values{"confirmed": {"1"}}, origin...), "/staff/webhooks?done=webhook-deleted")
		if end := env.get(admin, "/staff/webhooks"); end.testid("webhooks-empty").Length() != 1 {
			t.Fatalf("after deleting: %s", end.testid("staff-main").Text())
		}
	})
}
