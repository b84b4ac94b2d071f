package handlers_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestPeriodExportIsInTheAccessLog: each period export through the admin
// API writes one export entry naming the API key, the period, the kind
// and the filter; a refused one (unknown export, bad format, another
// club's period) writes none.
func TestPeriodExportIsInTheAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		demo := &enginetest.Demo{T: t, DB: db, Svc: engine.NewService(db, env.Gateway), GW: env.Gateway}
		demo.Pay(demo.Commit(1, 3))
		rowing, keyID := env.ApiKey(1, organisation.ScopeRead)
		tennis, _ := env.ApiKey(2, organisation.ScopeRead)
		for _, path := range []string{"/api/admin/periods/1/export/registrations", "/api/admin/periods/1/export/payments?format=json"} {
			if res := env.Admin(rowing, http.MethodGet, path, nil, "Host", handlertest.RowingHost); res.Status != http.StatusOK {
				t.Fatalf("%s: %d", path, res.Status)
			}
		}
		for _, path := range []string{"/api/admin/periods/1/export/everything", "/api/admin/periods/1/export/payments?format=xml", "/api/admin/periods/999/export/payments"} {
			if res := env.Admin(rowing, http.MethodGet, path, nil, "Host", handlertest.RowingHost); res.Status == http.StatusOK {
				t.Fatalf("%s: %d", path, res.Status)
			}
		}
		if res := env.Admin(tennis, http.MethodGet, "/api/admin/periods/1/export/registrations", nil, "Host", handlertest.TennisHost); res.Status != http.StatusNotFound {
			t.Fatalf("another club's period: %d", res.Status)
		}
		rows := handlertest.BulkReads(t, db, 1, "periods/")
		if len(rows) != 2 || rows[0].RecordID != "periods/1/export/registrations" || rows[1].RecordID != "periods/1/export/payments?format=json" {
			t.Fatalf("access log: %+v", rows)
		}
		for _, r := range rows {
			if !strings.Contains(r.Actor, "API key test") || !strings.Contains(r.Actor, "id "+strconv.FormatInt(keyID, 10)) || r.UserKey != nil || r.PersonID != nil {
				t.Fatalf("entry %+v: want the API key's name and id, no household", r)
			}
		}
		if n := len(handlertest.BulkReads(t, db, 2, "")); n != 0 {
			t.Fatalf("the other club's refused read wrote %d entries", n)
		}
	})
}

// TestOpenPaymentsCSVIsInTheAccessLog: the staff page's open payments CSV
// writes one export entry naming the staff member and the filter.
func TestOpenPaymentsCSVIsInTheAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		if res := env.Get(tr, "/staff/open-payments.csv?unpaid=0"); res.Status != http.StatusOK {
			t.Fatalf("csv: %d", res.Status)
		}
		if res := env.Get(tr, "/staff/open-payments.csv?sort=nonsense"); res.Status != http.StatusBadRequest {
			t.Fatalf("bad filter: %d", res.Status)
		}
		rows := handlertest.BulkReads(t, db, 1, "open-payments.csv")
		if len(rows) != 1 || rows[0].RecordID != "open-payments.csv?unpaid=0" || rows[0].Actor != "treasurer@example.org" || rows[0].StaffID == nil {
			t.Fatalf("access log: %+v", rows)
		}
	})
}
