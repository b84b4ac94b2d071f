package handlers_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/organisation"
)

type webhookEndpointDTO struct {
	ID     int64    `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Active bool     `json:"active"`
	Secret string   `json:"secret"`
}

// TestAdminWebhooks: endpoints are created with a secret shown once,
// validated per field, listed, changed, rotated and removed, and another
// organisation's key sees none of them.
func TestAdminWebhooks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		write, _ := env.apiKey(2, organisation.ScopeWrite)
		read, _ := env.apiKey(2, organisation.ScopeRead)
		rowing, _ := env.apiKey(1, organisation.ScopeWrite)
		const path = "/api/admin/webhooks"

		bad := env.admin(write, http.MethodPost, path, map[string]any{"url": "http://club.example/hooks", "events": []string{"payment.lost"}})
		e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, path)
		if len(e.Errors) != 2 || e.Errors[0].Field != "url" || e.Errors[1].Field != "events" {
			t.Fatalf("want url and events named: %s", bad.body)
		}
		expectHTTPError(t, env.admin(read, http.MethodPost, path, map[string]any{"url": "https://club.example/h", "events": []string{"payment.succeeded"}}),
			http.StatusForbidden, path)
		if n, _ := db.NewSelect().Model((*engine.WebhookEndpoint)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("%d endpoints after refusals", n)
		}

		res := env.admin(write, http.MethodPost, path, map[string]any{"url": "https://club.example/hooks",
			"events": []string{"payment.succeeded", "registration.committed", "payment.succeeded"}})
		var created webhookEndpointDTO
		res.json(t, &created)
		if res.status != http.StatusCreated || !strings.HasPrefix(created.Secret, "whsec_") || !created.Active ||
			strings.Join(created.Events, ",") != "registration.committed,payment.succeeded" {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		var stored engine.WebhookEndpoint
		if err := db.NewSelect().Model(&stored).Where("id = ?", created.ID).Scan(t.Context()); err != nil ||
			strings.Contains(stored.SecretSealed, strings.TrimPrefix(created.Secret, "whsec_")) {
			t.Fatalf("the secret is not stored sealed: %q (%v)", stored.SecretSealed, err)
		}

		list := env.admin(read, http.MethodGet, path, nil)
		if list.status != http.StatusOK || strings.Contains(string(list.body), created.Secret) || !strings.Contains(string(list.body), "https://club.example/hooks") {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		if other := env.admin(rowing, http.MethodGet, path, nil, "Host", rowingHost); other.status != http.StatusOK || strings.TrimSpace(string(other.body)) != "[]" {
			t.Fatalf("the rowing club sees: %s", other.body)
		}
		one := path + "/" + strconv.FormatInt(created.ID, 10)
		for _, r := range []struct{ method, path string }{{http.MethodPatch, one}, {http.MethodDelete, one},
			{http.MethodPost, one + "/rotate-secret"}, {http.MethodGet, one + "/deliveries"}} {
			expectHTTPError(t, env.admin(rowing, r.method, r.path, map[string]any{"active": false}, "Host", rowingHost), http.StatusNotFound, r.path)
		}

		bad = env.admin(write, http.MethodPatch, one, map[string]any{"events": []string{}})
		if e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, one); len(e.Errors) != 1 || e.Errors[0].Field != "events" {
			t.Fatalf("empty events: %s", bad.body)
		}
		// Internal addresses are refused when the endpoint is set, not only
		// when a delivery dials them.
		for _, internal := range []string{"http://127.0.0.1:9/hooks", "https://localhost/h", "https://10.1.2.3/h", "https://192.168.0.7/h",
			"https://169.254.169.254/latest", "https://[::1]/h", "https://[fe80::1]/h", "https://100.64.0.1/h"} {
			bad = env.admin(write, http.MethodPatch, one, map[string]any{"url": internal})
			if e := expectHTTPError(t, bad, http.StatusUnprocessableEntity, one); len(e.Errors) != 1 || e.Errors[0].Field != "url" ||
				!strings.Contains(e.Errors[0].Message, "public address") {
				t.Fatalf("%s: %s", internal, bad.body)
			}
		}
		created2 := env.admin(write, http.MethodPost, path, map[string]any{"url": "https://172.16.0.1/h", "events": []string{"payment.succeeded"}})
		expectHTTPError(t, created2, http.StatusUnprocessableEntity, path)
		res = env.admin(write, http.MethodPatch, one, map[string]any{"active": false, "url": "https://8.8.8.8/hooks"})
		var patched webhookEndpointDTO
		res.json(t, &patched)
		if res.status != http.StatusOK || patched.Active || patched.URL != "https://8.8.8.8/hooks" || len(patched.Events) != 2 || patched.Secret != "" {
			t.Fatalf("patch: %d %s", res.status, res.body)
		}

		res = env.admin(write, http.MethodPost, one+"/rotate-secret", nil)
		var rotated struct {
			Secret string `json:"secret"`
		}
		res.json(t, &rotated)
		if res.status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == created.Secret {
			t.Fatalf("rotate: %d %s", res.status, res.body)
		}
		if d := env.admin(read, http.MethodGet, one+"/deliveries", nil); d.status != http.StatusOK || strings.TrimSpace(string(d.body)) != "[]" {
			t.Fatalf("deliveries: %d %s", d.status, d.body)
		}
		if del := env.admin(write, http.MethodDelete, one, nil); del.status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", del.status, del.body)
		}
		expectHTTPError(t, env.admin(write, http.MethodDelete, one, nil), http.StatusNotFound, one)
	})
}

// checkWebhookResponses produces every documented response of the webhook
// endpoints' routes (TestOpenAPIResponses).
func checkWebhookResponses(t *testing.T, ck *apiChecker, anon *http.Client, write, read string) {
	t.Helper()
	hooks := "/api/admin/webhooks"
	good := map[string]any{"url": "https://club.example/hooks", "events": []string{"registration.committed"}}
	created := ck.conforming(anon, http.MethodPost, hooks, good, bearerOf(write)...)
	wantStatus(t, created, http.StatusCreated)
	var ep webhookEndpointDTO
	created.json(t, &ep)
	wantStatus(t, ck.conforming(anon, http.MethodPost, hooks, map[string]any{"url": "ftp://x", "events": []string{}}, bearerOf(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.do(anon, http.MethodPost, hooks, `{"url":`, bearerOf(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPost, hooks, "x", bearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPost, hooks, good, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, hooks, good), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodGet, hooks, nil, bearerOf(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, hooks, nil), http.StatusUnauthorized)

	one := hooks + "/" + strconv.FormatInt(ep.ID, 10)
	const missing = "/api/admin/webhooks/999"
	patch := map[string]any{"active": false}
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, patch, bearerOf(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"url": "http://club.example/"}, bearerOf(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, missing, patch, bearerOf(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, `{"active":`, bearerOf(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, "x", bearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, patch, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, patch), http.StatusUnauthorized)

	wantStatus(t, ck.conforming(anon, http.MethodPost, one+"/rotate-secret", nil, bearerOf(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, missing+"/rotate-secret", nil, bearerOf(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPost, one+"/rotate-secret", nil, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, one+"/rotate-secret", nil), http.StatusUnauthorized)

	wantStatus(t, ck.conforming(anon, http.MethodGet, one+"/deliveries", nil, bearerOf(read)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, missing+"/deliveries", nil, bearerOf(read)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodGet, one+"/deliveries", nil), http.StatusUnauthorized)

	// A delivered event to replay, written as the engine would have.
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"active": true}, bearerOf(write)...), http.StatusOK)
	ctx := t.Context()
	db := ck.env.db
	if _, err := db.ExecContext(ctx, "INSERT INTO webhook_events (public_id, organisation_id, type, body, created_at) VALUES (?, 1, ?, ?, ?)",
		"evt_replay", engine.EventRegistrationCommitted, `{"id":"evt_replay"}`, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO webhook_deliveries (event_id, endpoint_id, job_key, status, attempts, created_at) "+
		"SELECT id, ?, 'webhook:evt_replay', ?, 1, ? FROM webhook_events WHERE public_id = 'evt_replay'", ep.ID, engine.DeliveryDelivered, clock.Now()); err != nil {
		t.Fatal(err)
	}
	var delivered int64
	if err := db.NewSelect().Table("webhook_deliveries").Column("id").Where("job_key = 'webhook:evt_replay'").Scan(ctx, &delivered); err != nil {
		t.Fatal(err)
	}
	replay := fmt.Sprintf("%s/deliveries/%d/replay", one, delivered)
	wantStatus(t, ck.do(anon, http.MethodPost, replay, nil, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPost, replay, nil), http.StatusUnauthorized)
	queued := ck.conforming(anon, http.MethodPost, replay, nil, bearerOf(write)...)
	wantStatus(t, queued, http.StatusAccepted)
	var again struct {
		ID      int64  `json:"id"`
		EventID string `json:"eventId"`
		Status  string `json:"status"`
	}
	queued.json(t, &again)
	if again.EventID != "evt_replay" || again.Status != engine.DeliveryPending || again.ID == delivered {
		t.Fatalf("replay: %s", queued.body)
	}
	wantStatus(t, ck.conforming(anon, http.MethodPost, fmt.Sprintf("%s/deliveries/%d/replay", one, again.ID), nil, bearerOf(write)...), http.StatusConflict)
	wantStatus(t, ck.conforming(anon, http.MethodPost, one+"/deliveries/999/replay", nil, bearerOf(write)...), http.StatusNotFound)

	wantStatus(t, ck.do(anon, http.MethodDelete, one, nil, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodDelete, one, nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodDelete, one, nil, bearerOf(write)...), http.StatusNoContent)
	wantStatus(t, ck.conforming(anon, http.MethodDelete, one, nil, bearerOf(write)...), http.StatusNotFound)
}
