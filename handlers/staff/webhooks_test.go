package staff_test

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
	"portal/handlers/handlertest"
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
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}

		p := env.Get(admin, "/staff/webhooks")
		if p.Status != http.StatusOK || p.TestID("webhooks-empty").Length() != 1 || !strings.Contains(handlertest.SpacedText(p.TestID("staff-nav")), "Webhooks") ||
			p.Doc.Find(`input[name="events"][checked]`).Length() != len(engine.WebhookEventTypes) {
			t.Fatalf("empty page: %d %s", p.Status, p.Body)
		}

		bad := env.Post(admin, "/staff/webhooks", url.Values{"url": {"https://10.0.0.7/hooks"}, "events": {"payment.succeeded"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.TestID("error-url").Text(), "public address") ||
			bad.Doc.Find(`#wh-url`).AttrOr("value", "") != "https://10.0.0.7/hooks" || bad.Doc.Find(`input[name="events"][checked]`).Length() != 1 {
			t.Fatalf("private address: %d %s", bad.Status, bad.TestID("webhook-add").Text())
		}
		bad = env.Post(admin, "/staff/webhooks", url.Values{"url": {"https://club.example/hooks"}}, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-events").Length() != 1 || bad.TestID("webhook-error").Length() != 1 {
			t.Fatalf("no events: %d %s", bad.Status, bad.TestID("webhook-add").Text())
		}
		if n, _ := db.NewSelect().Model((*engine.WebhookEndpoint)(nil)).Count(ctx); n != 0 {
			t.Fatalf("%d endpoints after refusals", n)
		}

		added := env.Post(admin, "/staff/webhooks", url.Values{"url": {"https://club.example/hooks"},
			"events": {"registration.committed", "payment.succeeded"}}, origin...)
		secret := added.TestID("webhook-secret-value").Text()
		if added.Status != http.StatusOK || !strings.HasPrefix(secret, "whsec_") || added.TestID("webhook-row").Length() != 1 ||
			added.TestID("webhook-events").Text() != "registration.committed, payment.succeeded" {
			t.Fatalf("add: %d %s", added.Status, added.TestID("staff-main").Text())
		}
		id := added.TestID("webhook-row").AttrOr("data-id", "")
		base := "/staff/webhooks/" + id
		if list := env.Get(admin, "/staff/webhooks"); strings.Contains(string(list.Body), secret) || list.TestID("webhook-state").AttrOr("data-state", "") != "active" {
			t.Fatalf("the list shows the secret again or the endpoint is not active: %s", list.TestID("staff-main").Text())
		}

		handlertest.ExpectRedirect(t, env.Post(admin, base+"/active", url.Values{"active": {"0"}}, origin...), "/staff/webhooks?done=webhook-disabled")
		if list := env.Get(admin, "/staff/webhooks?done=webhook-disabled"); list.TestID("webhook-state").AttrOr("data-state", "") != "inactive" ||
			list.TestID("staff-flash").Length() != 1 || list.TestID("webhook-enable").Length() != 1 {
			t.Fatalf("after switching off: %s", list.TestID("staff-main").Text())
		}
		handlertest.ExpectRedirect(t, env.Post(admin, base+"/active", url.Values{"active": {"1"}}, origin...), "/staff/webhooks?done=webhook-enabled")

		ask := env.Post(admin, base+"/rotate", url.Values{}, origin...)
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("rotating without confirmation: %d", ask.Status)
		}
		rotated := env.Post(admin, base+"/rotate", url.Values{"confirmed": {"1"}}, origin...)
		if next := rotated.TestID("webhook-secret-value").Text(); rotated.Status != http.StatusOK || !strings.HasPrefix(next, "whsec_") || next == secret {
			t.Fatalf("rotate: %d %q", rotated.Status, next)
		}

		// Deliveries: a registration announces itself, delivered.
		env.CompleteDemo(env.NewClient())
		epID, _ := strconv.ParseInt(id, 10, 64)
		list, err := webhook.Of(env.Engine).Deliveries(ctx, 1, epID, 10)
		if err != nil || len(list) != 1 {
			t.Fatalf("deliveries: %+v %v", list, err)
		}
		if err := webhook.Of(env.Engine).RecordAttempt(ctx, list[0].ID, webhook.AttemptResult{Status: engine.DeliveryDelivered, ResponseCode: 200}); err != nil {
			t.Fatal(err)
		}
		dp := env.Get(admin, base)
		if dp.Status != http.StatusOK || dp.TestID("delivery-row").Length() != 1 || dp.TestID("delivery-replay").Length() != 1 {
			t.Fatalf("deliveries page: %d %s", dp.Status, dp.TestID("staff-main").Text())
		}
		delivered := dp.Doc.Find(`[data-testid="delivery-row"][data-id="` + strconv.FormatInt(list[0].ID, 10) + `"]`)
		if delivered.Find(`[data-testid="delivery-status"]`).AttrOr("data-status", "") != engine.DeliveryDelivered ||
			delivered.Find(`[data-testid="delivery-type"]`).Text() != engine.EventRegistrationCommitted {
			t.Fatalf("the delivered row: %s", delivered.Text())
		}
		replay := delivered.Find(`form`).AttrOr("action", "")
		handlertest.ExpectRedirect(t, env.Post(admin, replay, url.Values{}, origin...), base+"?done=webhook-replayed")
		after := env.Get(admin, base+"?done=webhook-replayed")
		if after.TestID("delivery-row").Length() != 2 || after.TestID("staff-flash").Length() != 1 ||
			after.TestID("delivery-event").First().Text() != list[0].EventID || after.TestID("delivery-replay").Length() != 1 {
			t.Fatalf("after the replay: %s", after.TestID("staff-main").Text())
		}
		if n, err := db.NewSelect().Model((*engine.AuditRecord)(nil)).Where("action = 'webhook.replay' AND actor = 'admin@example.org'").Count(ctx); err != nil || n != 1 {
			t.Fatalf("%d replays audited (%v)", n, err)
		}
		pending := base + "/deliveries/" + after.TestID("delivery-row").First().AttrOr("data-id", "") + "/replay"
		if res := env.Post(admin, pending, url.Values{}, origin...); res.Status != http.StatusConflict {
			t.Fatalf("replaying a pending delivery: %d", res.Status)
		}

		// An endpoint of another organisation, as the database holds it.
		if _, err := db.ExecContext(ctx, "INSERT INTO organisations (id, name, slug, created_at) VALUES (77, 'Other', 'other', ?)", clock.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO webhook_endpoints (id, organisation_id, url, secret_sealed, events, active, disabled_reason, created_at, updated_at) "+
			"VALUES (77, 77, 'https://other.example/h', 'x', 'payment.succeeded', TRUE, '', ?, ?)", clock.Now(), clock.Now()); err != nil {
			t.Fatal(err)
		}
		for _, res := range []handlertest.Page{env.Get(admin, "/staff/webhooks/77"), env.Post(admin, "/staff/webhooks/77/delete", url.Values{"confirmed": {"1"}}, origin...),
			env.Post(admin, "/staff/webhooks/77/active", url.Values{"active": {"0"}}, origin...)} {
			if res.Status != http.StatusNotFound {
				t.Fatalf("another organisation's endpoint: %d", res.Status)
			}
		}
		if strings.Contains(string(env.Get(admin, "/staff/webhooks").Body), "other.example") {
			t.Fatal("the list shows another organisation's endpoint")
		}

		ask = env.Post(admin, base+"/delete", url.Values{}, origin...)
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("deleting without confirmation: %d", ask.Status)
		}
		handlertest.ExpectRedirect(t, env.Post(admin, base+"/delete", url.Values{"confirmed": {"1"}}, origin...), "/staff/webhooks?done=webhook-deleted")
		if end := env.Get(admin, "/staff/webhooks"); end.TestID("webhooks-empty").Length() != 1 {
			t.Fatalf("after deleting: %s", end.TestID("staff-main").Text())
		}
	})
}
