package handlers_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/organisation"
)

func TestAdminMembershipTypeChangeAndDelete(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		write, _ := env.apiKey(2, organisation.ScopeWrite)
		read, _ := env.apiKey(2, organisation.ScopeRead)
		rowing, _ := env.apiKey(1, organisation.ScopeWrite)

		var typ struct {
			ID     int64  `json:"id"`
			Code   string `json:"code"`
			Name   string `json:"name"`
			MinAge *int   `json:"minAge"`
			MaxAge *int   `json:"maxAge"`
		}
		res := env.admin(write, http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 65})
		res.json(t, &typ)
		one := fmt.Sprintf("/api/admin/membership-types/%d", typ.ID)

		res = env.admin(write, http.MethodPatch, one, map[string]any{"name": "Seniors", "minAge": nil, "maxAge": 99})
		res.json(t, &typ)
		if res.status != http.StatusOK || typ.Name != "Seniors" || typ.MinAge != nil || typ.MaxAge == nil || *typ.MaxAge != 99 || typ.Code != "SENIOR" {
			t.Fatalf("patch: %d %s", res.status, res.body)
		}
		if e := expectHTTPError(t, env.admin(write, http.MethodPatch, one, map[string]any{"code": "lower case", "minAge": 120}), http.StatusUnprocessableEntity, one); len(e.Errors) != 2 {
			t.Fatalf("want code and maxAge: %+v", e.Errors)
		}
		expectHTTPError(t, env.admin(write, http.MethodPatch, one, map[string]any{"minAge": "old"}), http.StatusBadRequest, one)
		var types []struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		}
		env.admin(read, http.MethodGet, "/api/admin/membership-types", nil).json(t, &types)
		used := fmt.Sprintf("/api/admin/membership-types/%d", types[0].ID)
		expectHTTPError(t, env.admin(write, http.MethodPatch, one, map[string]any{"code": types[0].Code}), http.StatusConflict, one)
		expectHTTPError(t, env.admin(read, http.MethodPatch, one, map[string]any{"name": "X"}), http.StatusForbidden, one)
		expectHTTPError(t, env.admin(rowing, http.MethodPatch, one, map[string]any{"name": "X"}, "Host", rowingHost), http.StatusNotFound, one)

		// The club's first type has memberships and price rules: refused, with a reason.
		e := expectHTTPError(t, env.admin(write, http.MethodDelete, used, nil), http.StatusConflict, used)
		if e.Message == "" {
			t.Fatal("no reason given")
		}
		expectHTTPError(t, env.admin(rowing, http.MethodDelete, one, nil, "Host", rowingHost), http.StatusNotFound, one)
		if res := env.admin(write, http.MethodDelete, one, nil); res.status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", res.status, res.body)
		}
		expectHTTPError(t, env.admin(write, http.MethodDelete, one, nil), http.StatusNotFound, one)
	})
}

// checkMembershipTypeResponses produces every documented response of the
// membership type change and delete, for TestOpenAPIResponses
// (organisation 1's keys; its type 1 has memberships).
func checkMembershipTypeResponses(t *testing.T, ck *apiChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	created := ck.conforming(anon, http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "VETERAN", "name": "Veteran"}, bearerOf(write)...)
	var typ struct{ ID int64 }
	created.json(t, &typ)
	one := fmt.Sprintf("/api/admin/membership-types/%d", typ.ID)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"name": "Veterans", "minAge": 70}, bearerOf(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"minAge": -1}, bearerOf(write)...), http.StatusUnprocessableEntity)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, one, map[string]any{"code": "SENIOR"}, bearerOf(write)...), http.StatusConflict)
	wantStatus(t, ck.conforming(anon, http.MethodPatch, "/api/admin/membership-types/999", map[string]any{"name": "X"}, bearerOf(write)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, `{"name":`, bearerOf(write)...), http.StatusBadRequest)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, "x", bearerOf(write, "Content-Type", "text/plain")...), http.StatusUnsupportedMediaType)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{}, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{}, bearerOf(write, crossSite...)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodPatch, one, map[string]any{}), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodDelete, "/api/admin/membership-types/1", nil, bearerOf(write)...), http.StatusConflict)
	wantStatus(t, ck.do(anon, http.MethodDelete, one, nil, bearerOf(read)...), http.StatusForbidden)
	wantStatus(t, ck.do(anon, http.MethodDelete, one, nil), http.StatusUnauthorized)
	wantStatus(t, ck.conforming(anon, http.MethodDelete, one, nil, bearerOf(write)...), http.StatusNoContent)
	wantStatus(t, ck.conforming(anon, http.MethodDelete, one, nil, bearerOf(write)...), http.StatusNotFound)
}
