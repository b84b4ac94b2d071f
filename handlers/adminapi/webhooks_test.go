package adminapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
)

// TestAdminWebhooks: endpoints are created with a secret shown once,
// validated per field, listed, changed, rotated and removed, and another
// organisation's key sees none of them.
func TestAdminWebhooks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		write, _ := env.ApiKey(2, organisation.ScopeWrite)
		read, _ := env.ApiKey(2, organisation.ScopeRead)
		rowing, _ := env.ApiKey(1, organisation.ScopeWrite)
		const path = "/api/admin/webhooks"

		bad := env.Admin(write, http.MethodPost, path, map[string]any{"url": "http://club.example/hooks", "events": []string{"payment.lost"}})
		e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, path)
		if len(e.Errors) != 2 || e.Errors[0].Field != "url" || e.Errors[1].Field != "events" {
			t.Fatalf("want url and events named: %s", bad.Body)
		}
		handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodPost, path, map[string]any{"url": "https://club.example/h", "events": []string{"payment.succeeded"}}),
			http.StatusForbidden, path)
		if n, _ := db.NewSelect().Model((*engine.WebhookEndpoint)(nil)).Count(t.Context()); n != 0 {
			t.Fatalf("%d endpoints after refusals", n)
		}

		res := env.Admin(write, http.MethodPost, path, map[string]any{"url": "https://club.example/hooks",
			"events": []string{"payment.succeeded", "registration.committed", "payment.succeeded"}})
		var created handlertest.WebhookEndpointDTO
		res.JSON(t, &created)
		if res.Status != http.StatusCreated || !strings.HasPrefix(created.Secret, "whsec_") || !created.Active ||
			strings.Join(created.Events, ",") != "registration.committed,payment.succeeded" {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		var stored engine.WebhookEndpoint
		if err := db.NewSelect().Model(&stored).Where("id = ?", created.ID).Scan(t.Context()); err != nil ||
			strings.Contains(stored.SecretSealed, strings.TrimPrefix(created.Secret, "whsec_")) {
			t.Fatalf("the secret is not stored sealed: %q (%v)", stored.SecretSealed, err)
		}

		list := env.Admin(read, http.MethodGet, path, nil)
		if list.Status != http.StatusOK || strings.Contains(string(list.Body), created.Secret) || !strings.Contains(string(list.Body), "https://club.example/hooks") {
			t.Fatalf("list: %d %s", list.Status, list.Body)
		}
		if other := env.Admin(rowing, http.MethodGet, path, nil, "Host", handlertest.RowingHost); other.Status != http.StatusOK || strings.TrimSpace(string(other.Body)) != "[]" {
			t.Fatalf("the rowing club sees: %s", other.Body)
		}
		one := path + "/" + strconv.FormatInt(created.ID, 10)
		for _, r := range []struct{ method, path string }{{http.MethodPatch, one}, {http.MethodDelete, one},
			{http.MethodPost, one + "/rotate-secret"}, {http.MethodGet, one + "/deliveries"}} {
			handlertest.ExpectHTTPError(t, env.Admin(rowing, r.method, r.path, map[string]any{"active": false}, "Host", handlertest.RowingHost), http.StatusNotFound, r.path)
		}

		bad = env.Admin(write, http.MethodPatch, one, map[string]any{"events": []string{}})
		if e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, one); len(e.Errors) != 1 || e.Errors[0].Field != "events" {
			t.Fatalf("empty events: %s", bad.Body)
		}
		// Internal addresses are refused when the endpoint is set, not only
		// when a delivery dials them.
		for _, internal := range []string{"http://127.0.0.1:9/hooks", "https://localhost/h", "https://10.1.2.3/h", "https://192.168.0.7/h",
			"https://169.254.169.254/latest", "https://[::1]/h", "https://[fe80::1]/h", "https://100.64.0.1/h"} {
			bad = env.Admin(write, http.MethodPatch, one, map[string]any{"url": internal})
			if e := handlertest.ExpectHTTPError(t, bad, http.StatusUnprocessableEntity, one); len(e.Errors) != 1 || e.Errors[0].Field != "url" ||
				!strings.Contains(e.Errors[0].Message, "public address") {
				t.Fatalf("%s: %s", internal, bad.Body)
			}
		}
		created2 := env.Admin(write, http.MethodPost, path, map[string]any{"url": "https://172.16.0.1/h", "events": []string{"payment.succeeded"}})
		handlertest.ExpectHTTPError(t, created2, http.StatusUnprocessableEntity, path)
		res = env.Admin(write, http.MethodPatch, one, map[string]any{"active": false, "url": "https://8.8.8.8/hooks"})
		var patched handlertest.WebhookEndpointDTO
		res.JSON(t, &patched)
		if res.Status != http.StatusOK || patched.Active || patched.URL != "https://8.8.8.8/hooks" || len(patched.Events) != 2 || patched.Secret != "" {
			t.Fatalf("patch: %d %s", res.Status, res.Body)
		}

		res = env.Admin(write, http.MethodPost, one+"/rotate-secret", nil)
		var rotated struct {
			Secret string `json:"secret"`
		}
		res.JSON(t, &rotated)
		if res.Status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == created.Secret {
			t.Fatalf("rotate: %d %s", res.Status, res.Body)
		}
		if d := env.Admin(read, http.MethodGet, one+"/deliveries", nil); d.Status != http.StatusOK || strings.TrimSpace(string(d.Body)) != "[]" {
			t.Fatalf("deliveries: %d %s", d.Status, d.Body)
		}
		if del := env.Admin(write, http.MethodDelete, one, nil); del.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", del.Status, del.Body)
		}
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodDelete, one, nil), http.StatusNotFound, one)
	})
}
