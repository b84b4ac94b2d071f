package adminapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
)

func TestAdminMembershipTypeChangeAndDelete(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		write, _ := env.ApiKey(2, organisation.ScopeWrite)
		read, _ := env.ApiKey(2, organisation.ScopeRead)
		rowing, _ := env.ApiKey(1, organisation.ScopeWrite)

		var typ struct {
			ID     int64  `json:"id"`
			Code   string `json:"code"`
			Name   string `json:"name"`
			MinAge *int   `json:"minAge"`
			MaxAge *int   `json:"maxAge"`
		}
		res := env.Admin(write, http.MethodPost, "/api/admin/membership-types", map[string]any{"code": "SENIOR", "name": "Senior", "minAge": 65})
		res.JSON(t, &typ)
		one := fmt.Sprintf("/api/admin/membership-types/%d", typ.ID)

		res = env.Admin(write, http.MethodPatch, one, map[string]any{"name": "Seniors", "minAge": nil, "maxAge": 99})
		res.JSON(t, &typ)
		if res.Status != http.StatusOK || typ.Name != "Seniors" || typ.MinAge != nil || typ.MaxAge == nil || *typ.MaxAge != 99 || typ.Code != "SENIOR" {
			t.Fatalf("patch: %d %s", res.Status, res.Body)
		}
		if e := handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPatch, one, map[string]any{"code": "lower case", "minAge": 120}), http.StatusUnprocessableEntity, one); len(e.Errors) != 2 {
			t.Fatalf("want code and maxAge: %+v", e.Errors)
		}
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPatch, one, map[string]any{"minAge": "old"}), http.StatusBadRequest, one)
		var types []struct {
			ID   int64  `json:"id"`
			Code string `json:"code"`
		}
		env.Admin(read, http.MethodGet, "/api/admin/membership-types", nil).JSON(t, &types)
		used := fmt.Sprintf("/api/admin/membership-types/%d", types[0].ID)
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPatch, one, map[string]any{"code": types[0].Code}), http.StatusConflict, one)
		handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodPatch, one, map[string]any{"name": "X"}), http.StatusForbidden, one)
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodPatch, one, map[string]any{"name": "X"}, "Host", handlertest.RowingHost), http.StatusNotFound, one)

		// The club's first type has memberships and price rules: refused, with a reason.
		e := handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodDelete, used, nil), http.StatusConflict, used)
		if e.Message == "" {
			t.Fatal("no reason given")
		}
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodDelete, one, nil, "Host", handlertest.RowingHost), http.StatusNotFound, one)
		if res := env.Admin(write, http.MethodDelete, one, nil); res.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodDelete, one, nil), http.StatusNotFound, one)
	})
}
