package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
)

// StaffRoute is one staff page or action and the least role it needs.
// Every staff route is a row of StaffRoutes, so the role check
// (requireStaff) stands in front of each, and the role-matrix test walks
// the same table.
type StaffRoute struct {
	Method string
	// Path is below StaffPrefix, "" for the overview.
	Path string
	Min  engine.StaffRole
	// Example is Path with its parameters filled in, for the role matrix;
	// "" when Path has none.
	Example string
	handler func(*Server, echo.Context) error
}

// StaffRoutes is the route table of the staff pages. Add a row per route.
func StaffRoutes() []StaffRoute {
	return []StaffRoute{
		{Method: http.MethodGet, Path: "", Min: engine.RoleViewer, handler: (*Server).staffHome},
		{Method: http.MethodGet, Path: "/audit", Min: engine.RoleViewer, handler: (*Server).staffAuditPage},
		{Method: http.MethodGet, Path: "/jobs", Min: engine.RoleViewer, handler: (*Server).staffJobsPage},
		{Method: http.MethodPost, Path: "/jobs/:id/retry", Example: "/jobs/0/retry", Min: engine.RoleRegistrar, handler: (*Server).staffRetryJob},
		{Method: http.MethodGet, Path: "/payments", Min: engine.RoleViewer, handler: (*Server).staffPaymentsPage},
		{Method: http.MethodPost, Path: staffStatementPath, Min: engine.RoleTreasurer, handler: (*Server).staffImportStatement},
		{Method: http.MethodGet, Path: "/invitations", Min: engine.RoleRegistrar, handler: (*Server).staffInvitationsPage},
		{Method: http.MethodPost, Path: staffImportPath, Min: engine.RoleRegistrar, handler: (*Server).staffImportPersons},
		{Method: http.MethodGet, Path: staffSetupPath, Min: engine.RoleAdmin, handler: (*Server).staffSetupPage},
		{Method: http.MethodPost, Path: staffSetupPath + "/organisation", Min: engine.RoleAdmin, handler: (*Server).staffSaveOrganisation},
		{Method: http.MethodPost, Path: staffSetupPath + "/periods/:id/status", Example: staffSetupPath + "/periods/0/status", Min: engine.RoleAdmin, handler: (*Server).staffSetPeriodStatus},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff", Min: engine.RoleAdmin, handler: (*Server).staffAddStaff},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff/:id/role", Example: staffSetupPath + "/staff/0/role", Min: engine.RoleAdmin, handler: (*Server).staffChangeRole},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff/:id/disable", Example: staffSetupPath + "/staff/0/disable", Min: engine.RoleAdmin, handler: (*Server).staffDisableStaff},
		{Method: http.MethodGet, Path: staffDefinitionsPath, Min: engine.RoleAdmin, handler: (*Server).staffDefinitionsPage},
		{Method: http.MethodPost, Path: staffDefinitionsPath, Min: engine.RoleAdmin, handler: (*Server).staffUploadDefinition},
		{Method: http.MethodPost, Path: staffDefinitionsPath + "/:id/activate", Example: staffDefinitionsPath + "/0/activate", Min: engine.RoleAdmin, handler: (*Server).staffActivateDefinition},
	}
}

// mountStaff adds the staff sign-in and every row of StaffRoutes behind
// requireStaff.
func (s *Server) mountStaff(e *echo.Echo) {
	e.GET(StaffLoginPath, s.staffLoginPage)
	e.GET(StaffLoginPath+"/start", s.staffLogin)
	e.GET(StaffCallbackPath, s.staffCallback)
	e.POST(StaffLogoutPath, s.staffLogout)
	for _, r := range StaffRoutes() {
		h := r.handler
		e.Add(r.Method, StaffPrefix+r.Path, s.requireStaff(r.Min, func(c echo.Context) error { return h(s, c) }))
	}
}
