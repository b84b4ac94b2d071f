package handlers_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/organisation"
	"portal/engine/privacy"
	"portal/engine/staff"
)

// bulkReads are the access log's export entries of organisation orgID
// whose record starts with prefix, oldest first.
func bulkReads(t *testing.T, db *bun.DB, orgID int64, prefix string) []privacy.AccessEntry {
	t.Helper()
	var rows []privacy.AccessEntry
	if err := db.NewSelect().Model(&rows).Where("organisation_id = ? AND kind = ?", orgID, privacy.AccessExport).Order("id").Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []privacy.AccessEntry
	for _, r := range rows {
		if strings.HasPrefix(r.RecordID, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// TestPeriodExportIsInTheAccessLog: each period export through the admin
// API writes one export entry naming the API key, the period, the kind
// and the filter; a refused one (unknown export, bad format, another
// club's period) writes none.
func TestPeriodExportIsInTheAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newOrganisationsEnv(t, db, envOptions{})
		demo := &enginetest.Demo{T: t, DB: db, Svc: engine.NewService(db, env.gw), GW: env.gw}
		demo.Pay(demo.Commit(1, 3))
		rowing, keyID := env.apiKey(1, organisation.ScopeRead)
		tennis, _ := env.apiKey(2, organisation.ScopeRead)
		for _, path := range []string{"/api/admin/periods/1/export/registrations", "/api/admin/periods/1/export/payments?format=json"} {
			if res := env.admin(rowing, http.MethodGet, path, nil, "Host", rowingHost); res.status != http.StatusOK {
				t.Fatalf("%s: %d", path, res.status)
			}
		}
		for _, path := range []string{"/api/admin/periods/1/export/everything", "/api/admin/periods/1/export/payments?format=xml", "/api/admin/periods/999/export/payments"} {
			if res := env.admin(rowing, http.MethodGet, path, nil, "Host", rowingHost); res.status == http.StatusOK {
				t.Fatalf("%s: %d", path, res.status)
			}
		}
		if res := env.admin(tennis, http.MethodGet, "/api/admin/periods/1/export/registrations", nil, "Host", tennisHost); res.status != http.StatusNotFound {
			t.Fatalf("another club's period: %d", res.status)
		}
		rows := bulkReads(t, db, 1, "periods/")
		if len(rows) != 2 || rows[0].RecordID != "periods/1/export/registrations" || rows[1].RecordID != "periods/1/export/payments?format=json" {
			t.Fatalf("access log: %+v", rows)
		}
		for _, r := range rows {
			if !strings.Contains(r.Actor, "API key test") || !strings.Contains(r.Actor, "id "+strconv.FormatInt(keyID, 10)) || r.UserKey != nil || r.PersonID != nil {
				t.Fatalf("entry %+v: want the API key's name and id, no household", r)
			}
		}
		if n := len(bulkReads(t, db, 2, "")); n != 0 {
			t.Fatalf("the other club's refused read wrote %d entries", n)
		}
	})
}

// TestOpenPaymentsCSVIsInTheAccessLog: the staff page's open payments CSV
// writes one export entry naming the staff member and the filter.
func TestOpenPaymentsCSVIsInTheAccessLog(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffEnv(t, db, envOptions{})
		env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		if res := env.get(tr, "/staff/open-payments.csv?unpaid=0"); res.status != http.StatusOK {
			t.Fatalf("csv: %d", res.status)
		}
		if res := env.get(tr, "/staff/open-payments.csv?sort=nonsense"); res.status != http.StatusBadRequest {
			t.Fatalf("bad filter: %d", res.status)
		}
		rows := bulkReads(t, db, 1, "open-payments.csv")
		if len(rows) != 1 || rows[0].RecordID != "open-payments.csv?unpaid=0" || rows[0].Actor != "treasurer@example.org" || rows[0].StaffID == nil {
			t.Fatalf("access log: %+v", rows)
		}
	})
}
