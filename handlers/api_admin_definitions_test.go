package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
)

type definitionVersionDTO struct {
	Key           string `json:"key"`
	Version       int    `json:"version"`
	Active        bool   `json:"active"`
	Registrations int    `json:"registrations"`
}

func TestAdminDefinitionVersions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		write, _ := env.apiKey(2, organisation.ScopeWrite)
		read, _ := env.apiKey(2, organisation.ScopeRead)
		rowing, _ := env.apiKey(1, organisation.ScopeWrite)

		var list []definitionVersionDTO
		res := env.admin(read, http.MethodGet, "/api/admin/definitions?key=membership", nil)
		res.json(t, &list)
		if res.status != http.StatusOK || len(list) != 1 || list[0].Version != 1 || !list[0].Active {
			t.Fatalf("list: %d %s", res.status, res.body)
		}

		// Export, import unchanged, import changed: a second version.
		v1 := env.admin(read, http.MethodGet, "/api/admin/definitions/membership/versions/1", nil)
		if v1.status != http.StatusOK {
			t.Fatalf("export: %d %s", v1.status, v1.body)
		}
		if res := env.admin(write, http.MethodPost, "/api/admin/definitions", json.RawMessage(v1.body)); res.status != http.StatusOK || !strings.Contains(string(res.body), `"unchanged":true`) {
			t.Fatalf("re-import of the export: %d %s", res.status, res.body)
		}
		if y := env.admin(read, http.MethodGet, "/api/admin/definitions/membership/versions/1", nil, "Accept", "application/yaml"); y.status != http.StatusOK ||
			y.header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.body), "key: membership") {
			t.Fatalf("YAML export: %d %q %s", y.status, y.header.Get("Content-Type"), y.body)
		}
		var spec map[string]any
		if err := json.Unmarshal(v1.body, &spec); err != nil {
			t.Fatal(err)
		}
		spec["name"] = "Membership, second edition"
		if res := env.admin(write, http.MethodPost, "/api/admin/definitions", spec); res.status != http.StatusCreated {
			t.Fatalf("import v2: %d %s", res.status, res.body)
		}

		const one, two = "/api/admin/definitions/membership/versions/1", "/api/admin/definitions/membership/versions/2"
		expectHTTPError(t, env.admin(read, http.MethodPost, one+"/deactivate", nil), http.StatusForbidden, one+"/deactivate")
		expectHTTPError(t, env.admin(rowing, http.MethodPost, two+"/deactivate", nil, "Host", rowingHost), http.StatusNotFound, two+"/deactivate")
		expectHTTPError(t, env.admin(write, http.MethodPost, "/api/admin/definitions/membership/versions/9/activate", nil), http.StatusNotFound, "/api/admin/definitions/membership/versions/9/activate")
		var v definitionVersionDTO
		res = env.admin(write, http.MethodPost, one+"/deactivate", nil)
		res.json(t, &v)
		if res.status != http.StatusOK || v.Active || v.Version != 1 {
			t.Fatalf("deactivate v1: %d %s", res.status, res.body)
		}
		// v2 is now the only active version and the open period 3 uses the key.
		e := expectHTTPError(t, env.admin(write, http.MethodPost, two+"/deactivate", nil), http.StatusConflict, two+"/deactivate")
		if !strings.Contains(e.Message, "activate another version first") {
			t.Fatalf("refusal: %q", e.Message)
		}
		if res := env.admin(write, http.MethodPost, one+"/activate", nil); res.status != http.StatusOK || !strings.Contains(string(res.body), `"active":true`) {
			t.Fatalf("activate v1: %d %s", res.status, res.body)
		}
		env.admin(read, http.MethodGet, "/api/admin/definitions", nil).json(t, &list)
		if len(list) != 2 || !list[0].Active || !list[1].Active {
			t.Fatalf("list after: %+v", list)
		}
		// The API's changes are audited as the staff pages' are, naming the key.
		var audit []engine.AuditRecord
		if err := db.NewSelect().Model(&audit).Where("organisation_id = 2 AND target_type = 'definition'").Order("id").Scan(context.Background()); err != nil {
			t.Fatal(err)
		}
		// The unchanged re-import changed nothing and is not in it.
		if len(audit) != 3 || audit[0].Action != "definition.import" || audit[1].Action != "definition.deactivate" || audit[2].Action != "definition.activate" ||
			!strings.HasPrefix(audit[1].Actor, "API key ") || !strings.Contains(audit[1].BeforeJSON, `"active":true`) || !strings.Contains(audit[1].AfterJSON, `"active":false`) {
			t.Fatalf("audit: %+v", audit)
		}
		expectHTTPError(t, env.admin(rowing, http.MethodGet, two, nil, "Host", rowingHost), http.StatusNotFound, two)
		// The key's organisation is used whatever the document names: none at
		// all, or another organisation's.
		delete(spec, "organisationId")
		spec["name"] = "Membership, third edition"
		var imported struct{ Version int }
		res = env.admin(write, http.MethodPost, "/api/admin/definitions", spec)
		res.json(t, &imported)
		if res.status != http.StatusCreated || imported.Version != 3 {
			t.Fatalf("import without organisationId: %d %s", res.status, res.body)
		}
		spec["organisationId"] = 1
		spec["name"] = "Membership, fourth edition"
		if res := env.admin(write, http.MethodPost, "/api/admin/definitions", spec); res.status != http.StatusCreated || !strings.Contains(string(res.body), `"version":4`) {
			t.Fatalf("import naming another organisation: %d %s", res.status, res.body)
		}
		if n, err := db.NewSelect().Table("process_definitions").Where("organisation_id = 1 AND name LIKE 'Membership, %edition'").Count(context.Background()); err != nil || n != 0 {
			t.Fatalf("the other organisation got %d definitions (%v)", n, err)
		}
	})
}

// checkDefinitionResponses produces every documented response of the
// definition version operations, for TestOpenAPIResponses (organisation
// 1's keys; by then "membership" has version 1 and "extra" version 1).
func checkDefinitionResponses(t *testing.T, ck *apiChecker, anon *http.Client, write, read string, crossSite []string) {
	t.Helper()
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/definitions", nil, bearerOf(read)...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, "/api/admin/definitions", nil), http.StatusUnauthorized)
	const v1 = "/api/admin/definitions/membership/versions/1"
	wantStatus(t, ck.conforming(anon, http.MethodGet, v1, nil, bearerOf(read)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/definitions/membership/versions/9", nil, bearerOf(read)...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodGet, v1, nil), http.StatusUnauthorized)
	for _, op := range []string{"/deactivate", "/activate"} {
		wantStatus(t, ck.do(anon, http.MethodPost, v1+op, nil, bearerOf(read)...), http.StatusForbidden)
		wantStatus(t, ck.do(anon, http.MethodPost, v1+op, nil, bearerOf(write, crossSite...)...), http.StatusForbidden)
		wantStatus(t, ck.do(anon, http.MethodPost, v1+op, nil), http.StatusUnauthorized)
		wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/definitions/membership/versions/9"+op, nil, bearerOf(write)...), http.StatusNotFound)
	}
	wantStatus(t, ck.conforming(anon, http.MethodPost, v1+"/deactivate", nil, bearerOf(write)...), http.StatusConflict) // the open period 1 uses it
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/definitions/extra/versions/1/deactivate", nil, bearerOf(write)...), http.StatusOK)
	wantStatus(t, ck.conforming(anon, http.MethodPost, "/api/admin/definitions/extra/versions/1/activate", nil, bearerOf(write)...), http.StatusOK)
}
