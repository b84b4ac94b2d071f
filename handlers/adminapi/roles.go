package adminapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/staff"
	"portal/handlers/server"
	staffpages "portal/handlers/staff"
)

// AdminRoute is one route of the admin API and the staff page that does
// the same thing, whose least role (StaffRoutes) is what a staff session
// needs for the route: a staff member gets through the API exactly what
// their role gets on the pages, and the two cannot drift apart, since the
// role is read from the pages' own table.
type AdminRoute struct {
	Method string
	// Path is as mounted, below AdminPrefix.
	Path string
	// Page is the staff route ("GET /registrations.csv", its path below
	// StaffPrefix) doing what this route does; "" when no page does (or
	// the route shows what no page shows, such as live invitation links):
	// administrators only.
	Page string
	// Example is Path with its parameters filled in, for the role matrix;
	// "" when Path has none.
	Example string
}

// AdminRoutes is the role table of the admin API: a row per route. A
// route without a row is for administrators only (staffAPIAccess), and a
// test holds every mounted route to a row.
func AdminRoutes() []AdminRoute {
	const get, post = http.MethodGet, http.MethodPost
	setup := func(section string) string { return get + " " + server.StaffSetupPath + "/" + section }
	return []AdminRoute{
		{Method: get, Path: "/organisation", Page: setup(staffpages.SetupOrganisation)},
		{Method: http.MethodPatch, Path: "/organisation", Page: post + " " + server.StaffSetupPath + "/organisation"},
		{Method: post, Path: "/persons/import", Page: post + " " + server.StaffImportPath},
		{Method: post, Path: "/persons/unlink"},
		{Method: get, Path: "/persons/:id/export", Example: "/persons/1/export", Page: get + " " + server.StaffPersonsPath + "/:id/export.json"},
		{Method: post, Path: "/persons/:id/erase", Example: "/persons/0/erase", Page: post + " " + server.StaffPersonsPath + "/:id/erase"},
		{Method: get, Path: "/membership-types", Page: setup(staffpages.SetupMemberships)},
		{Method: post, Path: "/membership-types", Page: post + " " + server.StaffSetupPath + "/types"},
		{Method: http.MethodPatch, Path: "/membership-types/:id", Example: "/membership-types/0", Page: post + " " + server.StaffSetupPath + "/types/:id"},
		{Method: http.MethodDelete, Path: "/membership-types/:id", Example: "/membership-types/0", Page: post + " " + server.StaffSetupPath + "/types/:id/delete"},
		{Method: post, Path: "/definitions", Page: post + " " + server.StaffDefinitionsPath},
		{Method: get, Path: "/definitions", Page: get + " " + server.StaffDefinitionsPath},
		{Method: get, Path: "/definitions/:key/versions/:version", Example: "/definitions/none/versions/1", Page: get + " " + server.StaffDefinitionsPath},
		{Method: post, Path: "/definitions/:key/versions/:version/activate", Example: "/definitions/none/versions/1/activate", Page: post + " " + server.StaffDefinitionsPath + "/:id/activate"},
		{Method: post, Path: "/definitions/:key/versions/:version/deactivate", Example: "/definitions/none/versions/1/deactivate", Page: post + " " + server.StaffDefinitionsPath + "/:id/activate"},
		{Method: get, Path: "/periods", Page: get + " "},
		{Method: post, Path: "/periods"},
		{Method: http.MethodPatch, Path: "/periods/:id", Example: "/periods/0", Page: post + " " + server.StaffSetupPath + "/periods/:id/status"},
		{Method: get, Path: "/periods/:id/price-rules", Example: "/periods/1/price-rules", Page: setup(staffpages.SetupMemberships)},
		{Method: http.MethodPut, Path: "/periods/:id/price-rules", Example: "/periods/0/price-rules"},
		{Method: get, Path: "/payment-settings", Page: setup(staffpages.SetupPayments)},
		{Method: http.MethodPatch, Path: "/payment-settings", Page: post + " " + server.StaffSetupPath + "/payments"},
		{Method: get, Path: "/payments/attention", Page: get + " /payments"},
		{Method: post, Path: "/payments/:reference/capture", Example: "/payments/none/capture", Page: post + " /registrations/:id/capture"},
		{Method: post, Path: "/payments/:reference/refunded", Example: "/payments/none/refunded", Page: post + " /registrations/:id/refund"},
		{Method: get, Path: "/debit-runs", Page: get + " /debits"},
		{Method: post, Path: "/debit-runs", Page: post + " /debits"},
		{Method: get, Path: "/debit-runs/:id", Example: "/debit-runs/0", Page: get + " /debits/:id"},
		{Method: get, Path: "/debit-runs/:id/file", Example: "/debit-runs/0/file", Page: get + " /debits/:id/file"},
		{Method: post, Path: "/debit-runs/:id/sent", Example: "/debit-runs/0/sent", Page: post + " /debits/:id/sent"},
		{Method: post, Path: "/debit-runs/:id/cancel", Example: "/debit-runs/0/cancel", Page: post + " /debits/:id/cancel"},
		// The list shows no links; issuing returns the new live links,
		// which no page shows: administrators only.
		{Method: get, Path: "/periods/:id/invitations", Example: "/periods/1/invitations", Page: get + " /invitations"},
		{Method: post, Path: "/periods/:id/invitations", Example: "/periods/0/invitations"},
		{Method: post, Path: "/invitations/:id/revoke", Example: "/invitations/0/revoke", Page: post + " /invitations/:id/revoke"},
		{Method: get, Path: "/periods/:id/export/:kind", Example: "/periods/1/export/registrations", Page: get + " /registrations.csv"},
		{Method: get, Path: "/webhooks", Page: get + " " + server.StaffWebhooksPath},
		{Method: post, Path: "/webhooks", Page: post + " " + server.StaffWebhooksPath},
		{Method: http.MethodPatch, Path: "/webhooks/:id", Example: "/webhooks/0", Page: post + " " + server.StaffWebhooksPath + "/:id/active"},
		{Method: http.MethodDelete, Path: "/webhooks/:id", Example: "/webhooks/0", Page: post + " " + server.StaffWebhooksPath + "/:id/delete"},
		{Method: post, Path: "/webhooks/:id/rotate-secret", Example: "/webhooks/0/rotate-secret", Page: post + " " + server.StaffWebhooksPath + "/:id/rotate"},
		{Method: get, Path: "/webhooks/:id/deliveries", Example: "/webhooks/0/deliveries", Page: get + " " + server.StaffWebhooksPath + "/:id"},
		{Method: post, Path: "/webhooks/:id/deliveries/:delivery/replay", Example: "/webhooks/0/deliveries/0/replay", Page: post + " " + server.StaffWebhooksPath + "/:id/deliveries/:delivery/replay"},
	}
}

// Min is the least staff role the route needs: its page's, or admin.
func (r AdminRoute) Min() staff.StaffRole {
	if r.Page == "" {
		return staff.RoleAdmin
	}
	for _, p := range staffpages.StaffRoutes() {
		if p.Method+" "+p.Path == r.Page {
			return p.Min
		}
	}
	return staff.RoleAdmin // a page that is gone: the safe side (a test names it)
}

// adminRoles maps "METHOD /api/admin/path" (the route as mounted) to the
// least staff role it needs.
func adminRoles() map[string]staff.StaffRole {
	out := map[string]staff.StaffRole{}
	for _, r := range AdminRoutes() {
		out[r.Method+" "+server.AdminPrefix+r.Path] = r.Min()
	}
	return out
}

// adminRouteRole is the least staff role c's admin API route needs;
// admin for a route the table does not name.
func (s *Server) adminRouteRole(c echo.Context) staff.StaffRole {
	if r, ok := s.AdminRoles[c.Request().Method+" "+c.Path()]; ok {
		return r
	}
	return staff.RoleAdmin
}
