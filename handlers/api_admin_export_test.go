package handlers_test

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
)

func TestAdminPeriodExport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		demo := &enginetest.Demo{T: t, DB: db, Svc: engine.NewService(db, env.gw), GW: env.gw}
		demo.Pay(demo.Commit(1, 3)) // Alex and Robin, paid
		rowing, _ := env.apiKey(1, organisation.ScopeRead)
		tennis, _ := env.apiKey(2, organisation.ScopeRead)
		get := func(key, path string, host string) response {
			return env.admin(key, http.MethodGet, path, nil, "Host", host)
		}

		res := get(rowing, "/api/admin/periods/1/export/registrations", rowingHost)
		if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/csv") {
			t.Fatalf("registrations: %d %q %s", res.status, res.header.Get("Content-Type"), res.body)
		}
		records, err := csv.NewReader(strings.NewReader(string(res.body))).ReadAll()
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
			t.Fatalf("want Alex and Robin active and paid:\n%s", res.body)
		}

		res = get(rowing, "/api/admin/periods/1/export/payments?format=json", rowingHost)
		var payments []map[string]string
		if err := json.Unmarshal(res.body, &payments); err != nil || res.status != http.StatusOK {
			t.Fatalf("payments JSON: %d %v %s", res.status, err, res.body)
		}
		if len(payments) != 1 || payments[0]["status"] != "SUCCEEDED" || payments[0]["userKey"] != engine.DemoUserKey || payments[0]["amountMinor"] == "" {
			t.Fatalf("payments: %v", payments)
		}

		// Another club sees nothing of it; its own period exports empty.
		expectHTTPError(t, get(tennis, "/api/admin/periods/1/export/registrations", tennisHost), http.StatusNotFound, "/api/admin/periods/1/export/registrations")
		res = get(tennis, "/api/admin/periods/3/export/payments?format=json", tennisHost)
		if res.status != http.StatusOK || strings.TrimSpace(string(res.body)) != "[\n]" {
			t.Fatalf("tennis payments: %d %q", res.status, res.body)
		}
		expectHTTPError(t, get(rowing, "/api/admin/periods/1/export/everything", rowingHost), http.StatusNotFound, "/api/admin/periods/1/export/everything")
		expectHTTPError(t, get(rowing, "/api/admin/periods/1/export/payments?format=xml", rowingHost), http.StatusBadRequest, "/api/admin/periods/1/export/payments")
		expectHTTPError(t, env.do(env.newClient(), http.MethodGet, "/api/admin/periods/1/export/payments", nil, "Host", rowingHost), http.StatusUnauthorized, "/api/admin/periods/1/export/payments")
	})
}

// checkExportResponses produces every documented response of the period
// export, for TestOpenAPIResponses (organisation 1's read key).
func checkExportResponses(t *testing.T, ck *apiChecker, anon *http.Client, read string) {
	t.Helper()
	bearer := bearerOf(read)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/periods/1/export/payments?format=json", nil, bearer...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, "/api/admin/periods/1/export/registrations", nil, bearer...), http.StatusOK)
	wantStatus(t, ck.do(anon, http.MethodGet, "/api/admin/periods/1/export/payments?format=xml", nil, bearer...), http.StatusBadRequest)
	wantStatus(t, ck.conforming(anon, http.MethodGet, "/api/admin/periods/999/export/payments", nil, bearer...), http.StatusNotFound)
	wantStatus(t, ck.do(anon, http.MethodGet, "/api/admin/periods/1/export/payments", nil), http.StatusUnauthorized)
}
