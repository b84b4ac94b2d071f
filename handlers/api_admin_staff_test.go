package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
)

// TestAdminAPIWithStaffSession: a signed-in staff member uses the admin API
// of their organisation with the staff cookie instead of a key: a role
// gets what it gets on the pages (a viewer reads the periods, not the
// setup), only admins change settings, the audit log names the staff
// member, and a request from another origin is refused.
func TestAdminAPIWithStaffSession(t *testing.T) {
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	env.addStaff("viewer@example.org", staff.RoleViewer)
	env.addStaff("admin@example.org", staff.RoleAdmin)
	viewer := env.mustStaffSignIn("viewer@example.org", "/staff")
	admin := env.mustStaffSignIn("admin@example.org", "/staff")

	if res := env.do(env.newClient(), http.MethodGet, "/api/admin/organisation", nil); res.status != http.StatusUnauthorized {
		t.Fatalf("no key and no staff session: %d, want 401", res.status)
	}
	if res := env.do(viewer, http.MethodGet, "/api/admin/periods", nil); res.status != http.StatusOK {
		t.Fatalf("viewer reads: %d %s", res.status, res.body)
	}
	if res := env.do(viewer, http.MethodGet, "/api/admin/organisation", nil); res.status != http.StatusForbidden {
		t.Fatalf("viewer reads the setup page's settings: %d, want 403 as on /staff/setup", res.status)
	}
	change := map[string]any{"name": "Riverside Tennis"}
	if res := env.do(viewer, http.MethodPatch, "/api/admin/organisation", change); res.status != http.StatusForbidden {
		t.Fatalf("viewer changes: %d, want 403", res.status)
	}
	if res := env.do(admin, http.MethodPatch, "/api/admin/organisation", change, "Origin", "https://evil.example"); res.status != http.StatusForbidden {
		t.Fatalf("admin's change from another origin: %d, want 403", res.status)
	}
	res := env.do(admin, http.MethodPatch, "/api/admin/organisation", change, "Origin", env.srv.URL)
	if res.status != http.StatusOK {
		t.Fatalf("admin changes: %d %s", res.status, res.body)
	}
	var org struct{ Name string }
	res.json(t, &org)
	if org.Name != "Riverside Tennis" {
		t.Errorf("name %q after the change", org.Name)
	}
	log, err := env.svc.AuditLog(context.Background(), engine.AuditQuery{OrganisationID: 1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Actor != "admin@example.org" || log[0].StaffID == nil {
		t.Errorf("audit %+v, want the change by admin@example.org", log)
	}
}
