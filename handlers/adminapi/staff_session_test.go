package adminapi_test

import (
	"context"
	"net/http"
	"testing"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestAdminAPIWithStaffSession: a signed-in staff member uses the admin API
// of their organisation with the staff cookie instead of a key: a role
// gets what it gets on the pages (a viewer reads the periods, not the
// setup), only admins change settings, the audit log names the staff
// member, and a request from another origin is refused.
func TestAdminAPIWithStaffSession(t *testing.T) {
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	env.AddStaff("viewer@example.org", staff.RoleViewer)
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
	admin := env.MustStaffSignIn("admin@example.org", "/staff")

	if res := env.Do(env.NewClient(), http.MethodGet, "/api/admin/organisation", nil); res.Status != http.StatusUnauthorized {
		t.Fatalf("no key and no staff session: %d, want 401", res.Status)
	}
	if res := env.Do(viewer, http.MethodGet, "/api/admin/periods", nil); res.Status != http.StatusOK {
		t.Fatalf("viewer reads: %d %s", res.Status, res.Body)
	}
	if res := env.Do(viewer, http.MethodGet, "/api/admin/organisation", nil); res.Status != http.StatusForbidden {
		t.Fatalf("viewer reads the setup page's settings: %d, want 403 as on /staff/setup", res.Status)
	}
	change := map[string]any{"name": "Riverside Tennis"}
	if res := env.Do(viewer, http.MethodPatch, "/api/admin/organisation", change); res.Status != http.StatusForbidden {
		t.Fatalf("viewer changes: %d, want 403", res.Status)
	}
	if res := env.Do(admin, http.MethodPatch, "/api/admin/organisation", change, "Origin", "https://evil.example"); res.Status != http.StatusForbidden {
		t.Fatalf("admin's change from another origin: %d, want 403", res.Status)
	}
	res := env.Do(admin, http.MethodPatch, "/api/admin/organisation", change, "Origin", env.Server.URL)
	if res.Status != http.StatusOK {
		t.Fatalf("admin changes: %d %s", res.Status, res.Body)
	}
	var org struct{ Name string }
	res.JSON(t, &org)
	if org.Name != "Riverside Tennis" {
		t.Errorf("name %q after the change", org.Name)
	}
	log, err := env.Engine.AuditLog(context.Background(), engine.AuditQuery{OrganisationID: 1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Actor != "admin@example.org" || log[0].StaffID == nil {
		t.Errorf("audit %+v, want the change by admin@example.org", log)
	}
}
