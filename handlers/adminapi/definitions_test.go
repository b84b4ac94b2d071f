package adminapi_test

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
	"portal/handlers/handlertest"
)

type definitionVersionDTO struct {
	Key           string `json:"key"`
	Version       int    `json:"version"`
	Active        bool   `json:"active"`
	Registrations int    `json:"registrations"`
}

func TestAdminDefinitionVersions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		write, _ := env.ApiKey(2, organisation.ScopeWrite)
		read, _ := env.ApiKey(2, organisation.ScopeRead)
		rowing, _ := env.ApiKey(1, organisation.ScopeWrite)

		var list []definitionVersionDTO
		res := env.Admin(read, http.MethodGet, "/api/admin/definitions?key=membership", nil)
		res.JSON(t, &list)
		if res.Status != http.StatusOK || len(list) != 1 || list[0].Version != 1 || !list[0].Active {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}

		// Export, import unchanged, import changed: a second version.
		v1 := env.Admin(read, http.MethodGet, "/api/admin/definitions/membership/versions/1", nil)
		if v1.Status != http.StatusOK {
			t.Fatalf("export: %d %s", v1.Status, v1.Body)
		}
		if res := env.Admin(write, http.MethodPost, "/api/admin/definitions", json.RawMessage(v1.Body)); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"unchanged":true`) {
			t.Fatalf("re-import of the export: %d %s", res.Status, res.Body)
		}
		if y := env.Admin(read, http.MethodGet, "/api/admin/definitions/membership/versions/1", nil, "Accept", "application/yaml"); y.Status != http.StatusOK ||
			y.Header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.Body), "key: membership") {
			t.Fatalf("YAML export: %d %q %s", y.Status, y.Header.Get("Content-Type"), y.Body)
		}
		var spec map[string]any
		if err := json.Unmarshal(v1.Body, &spec); err != nil {
			t.Fatal(err)
		}
		spec["name"] = "Membership, second edition"
		if res := env.Admin(write, http.MethodPost, "/api/admin/definitions", spec); res.Status != http.StatusCreated {
			t.Fatalf("import v2: %d %s", res.Status, res.Body)
		}

		const one, two = "/api/admin/definitions/membership/versions/1", "/api/admin/definitions/membership/versions/2"
		handlertest.ExpectHTTPError(t, env.Admin(read, http.MethodPost, one+"/deactivate", nil), http.StatusForbidden, one+"/deactivate")
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodPost, two+"/deactivate", nil, "Host", handlertest.RowingHost), http.StatusNotFound, two+"/deactivate")
		handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPost, "/api/admin/definitions/membership/versions/9/activate", nil), http.StatusNotFound, "/api/admin/definitions/membership/versions/9/activate")
		var v definitionVersionDTO
		res = env.Admin(write, http.MethodPost, one+"/deactivate", nil)
		res.JSON(t, &v)
		if res.Status != http.StatusOK || v.Active || v.Version != 1 {
			t.Fatalf("deactivate v1: %d %s", res.Status, res.Body)
		}
		// v2 is now the only active version and the open period 3 uses the key.
		e := handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPost, two+"/deactivate", nil), http.StatusConflict, two+"/deactivate")
		if !strings.Contains(e.Message, "activate another version first") {
			t.Fatalf("refusal: %q", e.Message)
		}
		if res := env.Admin(write, http.MethodPost, one+"/activate", nil); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"active":true`) {
			t.Fatalf("activate v1: %d %s", res.Status, res.Body)
		}
		env.Admin(read, http.MethodGet, "/api/admin/definitions", nil).JSON(t, &list)
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
		handlertest.ExpectHTTPError(t, env.Admin(rowing, http.MethodGet, two, nil, "Host", handlertest.RowingHost), http.StatusNotFound, two)
		// The key's organisation is used whatever the document names: none at
		// all, or another organisation's.
		delete(spec, "organisationId")
		spec["name"] = "Membership, third edition"
		var imported struct{ Version int }
		res = env.Admin(write, http.MethodPost, "/api/admin/definitions", spec)
		res.JSON(t, &imported)
		if res.Status != http.StatusCreated || imported.Version != 3 {
			t.Fatalf("import without organisationId: %d %s", res.Status, res.Body)
		}
		spec["organisationId"] = 1
		spec["name"] = "Membership, fourth edition"
		if res := env.Admin(write, http.MethodPost, "/api/admin/definitions", spec); res.Status != http.StatusCreated || !strings.Contains(string(res.Body), `"version":4`) {
			t.Fatalf("import naming another organisation: %d %s", res.Status, res.Body)
		}
		if n, err := db.NewSelect().Table("process_definitions").Where("organisation_id = 1 AND name LIKE 'Membership, %edition'").Count(context.Background()); err != nil || n != 0 {
			t.Fatalf("the other organisation got %d definitions (%v)", n, err)
		}
	})
}
