package adminapi_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/report"
	"portal/handlers/handlertest"
)

func TestAdminPeriodExport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		demo := &enginetest.Demo{T: t, DB: db, Svc: engine.NewService(db, env.Gateway), GW: env.Gateway}
		demo.Pay(demo.Commit(1, 3)) // Alex and Robin, paid
		rowing, _ := env.ApiKey(1, organisation.ScopeRead)
		tennis, _ := env.ApiKey(2, organisation.ScopeRead)
		get := func(key, path string, host string) handlertest.Response {
			return env.Admin(key, http.MethodGet, path, nil, "Host", host)
		}

		res := get(rowing, "/api/admin/periods/1/export/registrations", handlertest.RowingHost)
		if res.Status != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("registrations: %d %q %s", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		records, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(records[0], ",") != strings.Join(report.ExportColumns[report.ExportRegistrations], ",") {
			t.Fatalf("header %v", records[0])
		}
		paid := 0
		for _, r := range records[1:] {
			if r[12] == "Paid" && r[11] == "Active" && (r[5] == "Alex" || r[5] == "Robin") && r[16] != "" {
				paid++
			}
		}
		if paid != 2 {
			t.Fatalf("want Alex and Robin active and paid:\n%s", res.Body)
		}

		res = get(rowing, "/api/admin/periods/1/export/payments?format=json", handlertest.RowingHost)
		var payments []map[string]string
		if err := json.Unmarshal(res.Body, &payments); err != nil || res.Status != http.StatusOK {
			t.Fatalf("payments JSON: %d %v %s", res.Status, err, res.Body)
		}
		if len(payments) != 1 || payments[0]["status"] != "SUCCEEDED" || payments[0]["userKey"] != engine.DemoUserKey || payments[0]["amountMinor"] == "" {
			t.Fatalf("payments: %v", payments)
		}

		// Another club sees nothing of it; its own period exports empty.
		handlertest.ExpectHTTPError(t, get(tennis, "/api/admin/periods/1/export/registrations", handlertest.TennisHost), http.StatusNotFound, "/api/admin/periods/1/export/registrations")
		res = get(tennis, "/api/admin/periods/3/export/payments?format=json", handlertest.TennisHost)
		if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != "[\n]" {
			t.Fatalf("tennis payments: %d %q", res.Status, res.Body)
		}
		handlertest.ExpectHTTPError(t, get(rowing, "/api/admin/periods/1/export/everything", handlertest.RowingHost), http.StatusNotFound, "/api/admin/periods/1/export/everything")
		handlertest.ExpectHTTPError(t, get(rowing, "/api/admin/periods/1/export/payments?format=xml", handlertest.RowingHost), http.StatusBadRequest, "/api/admin/periods/1/export/payments")
		handlertest.ExpectHTTPError(t, env.Do(env.NewClient(), http.MethodGet, "/api/admin/periods/1/export/payments", nil, "Host", handlertest.RowingHost), http.StatusUnauthorized, "/api/admin/periods/1/export/payments")
	})
}
