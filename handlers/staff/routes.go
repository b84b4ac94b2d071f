package staff

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/staff"
	"portal/handlers/server"
)

// StaffRoute is one staff page or action and the least role it needs.
// Every staff route is a row of StaffRoutes, so the role check
// (requireStaff) stands in front of each, and the role-matrix test walks
// the same table.
type StaffRoute struct {
	Method string
	// Path is below StaffPrefix, "" for the overview.
	Path string
	Min  staff.StaffRole
	// Example is Path with its parameters filled in, for the role matrix;
	// "" when Path has none.
	Example string
	handler func(*Server, echo.Context) error
}

// StaffRoutes is the route table of the staff pages. Add a row per route;
// the setup sections' pages come from setupSections.
func StaffRoutes() []StaffRoute {
	routes := []StaffRoute{
		{Method: http.MethodGet, Path: "", Min: staff.RoleViewer, handler: (*Server).staffOverview},
		{Method: http.MethodGet, Path: "/audit", Min: staff.RoleViewer, handler: (*Server).StaffAuditPage},
		{Method: http.MethodGet, Path: "/registrations", Min: staff.RoleViewer, handler: (*Server).StaffRegistrations},
		{Method: http.MethodGet, Path: "/registrations.csv", Min: staff.RoleTreasurer, handler: (*Server).StaffRegistrationsCSV},
		{Method: http.MethodGet, Path: "/registrations/:id", Example: "/registrations/1", Min: staff.RoleViewer, handler: (*Server).StaffRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-confirmation", Example: "/registrations/1/resend-confirmation", Min: staff.RoleRegistrar, handler: (*Server).StaffResendConfirmation},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-payment-link", Example: "/registrations/1/resend-payment-link", Min: staff.RoleRegistrar, handler: (*Server).StaffResendPaymentLink},
		{Method: http.MethodPost, Path: "/registrations/:id/reset", Example: "/registrations/1/reset", Min: staff.RoleRegistrar, handler: (*Server).StaffResetRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/cancel", Example: "/registrations/1/cancel", Min: staff.RoleRegistrar, handler: (*Server).StaffCancelRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/capture", Example: "/registrations/1/capture", Min: staff.RoleTreasurer, handler: (*Server).StaffCapture},
		{Method: http.MethodPost, Path: "/registrations/:id/refund", Example: "/registrations/1/refund", Min: staff.RoleTreasurer, handler: (*Server).StaffRefund},
		{Method: http.MethodPost, Path: "/mandates/:id/revoke", Example: "/mandates/0/revoke", Min: staff.RoleTreasurer, handler: (*Server).StaffRevokeMandate},
		{Method: http.MethodGet, Path: server.OpenPaymentsPath, Min: staff.RoleTreasurer, handler: (*Server).StaffOpenPayments},
		{Method: http.MethodGet, Path: server.OpenPaymentsPath + ".csv", Min: staff.RoleTreasurer, handler: (*Server).StaffOpenPaymentsCSV},
		{Method: http.MethodPost, Path: server.OpenPaymentsPath + "/resend-payment-link", Min: staff.RoleTreasurer, handler: (*Server).StaffResendPaymentLinks},
		{Method: http.MethodGet, Path: server.YearReportPath, Min: staff.RoleTreasurer, handler: (*Server).StaffYearReport},
		{Method: http.MethodGet, Path: server.YearReportPath + ".csv", Min: staff.RoleTreasurer, handler: (*Server).StaffYearReportCSV},
		{Method: http.MethodGet, Path: server.YearReportPath + ".pdf", Min: staff.RoleTreasurer, handler: (*Server).StaffYearReportPDF},
		{Method: http.MethodGet, Path: "/jobs", Min: staff.RoleViewer, handler: (*Server).staffJobsPage},
		{Method: http.MethodPost, Path: "/jobs/:id/retry", Example: "/jobs/0/retry", Min: staff.RoleRegistrar, handler: (*Server).staffRetryJob},
		{Method: http.MethodPost, Path: "/jobs/run", Min: staff.RoleAdmin, handler: (*Server).staffRunJob},
		{Method: http.MethodGet, Path: "/payments", Min: staff.RoleViewer, handler: (*Server).StaffPaymentsPage},
		{Method: http.MethodPost, Path: server.StaffStatementPath, Min: staff.RoleTreasurer, handler: (*Server).StaffImportStatement},
		{Method: http.MethodGet, Path: server.StaffDebitsPath, Min: staff.RoleViewer, handler: (*Server).StaffDebitRuns},
		{Method: http.MethodPost, Path: server.StaffDebitsPath, Min: staff.RoleTreasurer, handler: (*Server).StaffPrepareDebitRun},
		{Method: http.MethodGet, Path: server.StaffDebitsPath + "/:id", Example: server.StaffDebitsPath + "/0", Min: staff.RoleViewer, handler: (*Server).StaffDebitRun},
		{Method: http.MethodGet, Path: server.StaffDebitsPath + "/:id/file", Example: server.StaffDebitsPath + "/0/file", Min: staff.RoleTreasurer, handler: (*Server).StaffDebitRunFile},
		{Method: http.MethodPost, Path: server.StaffDebitsPath + "/:id/sent", Example: server.StaffDebitsPath + "/0/sent", Min: staff.RoleTreasurer, handler: (*Server).StaffMarkDebitRunSent},
		{Method: http.MethodPost, Path: server.StaffDebitsPath + "/:id/cancel", Example: server.StaffDebitsPath + "/0/cancel", Min: staff.RoleTreasurer, handler: (*Server).StaffCancelDebitRun},
		{Method: http.MethodPost, Path: server.StaffCreditsPath + "/:id/resolve", Example: server.StaffCreditsPath + "/0/resolve", Min: staff.RoleTreasurer, handler: (*Server).StaffResolveCredit},
		{Method: http.MethodGet, Path: "/invitations", Min: staff.RoleRegistrar, handler: (*Server).StaffInvitationsPage},
		{Method: http.MethodPost, Path: server.StaffImportPath, Min: staff.RoleRegistrar, handler: (*Server).StaffImportPersons},
		{Method: http.MethodPost, Path: server.StaffInvitePath, Min: staff.RoleRegistrar, handler: (*Server).StaffSendInvitations},
		{Method: http.MethodPost, Path: "/invitations/:id/revoke", Example: "/invitations/0/revoke", Min: staff.RoleRegistrar, handler: (*Server).StaffRevokeInvitation},
		{Method: http.MethodGet, Path: server.StaffSetupPath, Min: staff.RoleAdmin, handler: (*Server).staffSetupPage},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/organisation", Min: staff.RoleAdmin, handler: (*Server).staffSaveOrganisation},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/languages", Min: staff.RoleAdmin, handler: (*Server).staffSaveLanguages},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/payments", Min: staff.RoleAdmin, handler: (*Server).staffSavePayments},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/payment-methods", Min: staff.RoleAdmin, handler: (*Server).staffSavePaymentMethods},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/messages", Min: staff.RoleAdmin, handler: (*Server).staffSaveMessages},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/retention", Min: staff.RoleAdmin, handler: (*Server).staffSaveRetention},
		{Method: http.MethodGet, Path: server.StaffAccessLogPath, Min: staff.RoleAdmin, handler: (*Server).staffAccessLogPage},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/types", Min: staff.RoleAdmin, handler: (*Server).staffAddType},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/types/:id", Example: server.StaffSetupPath + "/types/0", Min: staff.RoleAdmin, handler: (*Server).staffChangeType},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/types/:id/delete", Example: server.StaffSetupPath + "/types/0/delete", Min: staff.RoleAdmin, handler: (*Server).staffDeleteType},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/periods/:id/status", Example: server.StaffSetupPath + "/periods/0/status", Min: staff.RoleAdmin, handler: (*Server).staffSetPeriodStatus},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/periods/:id/texts", Example: server.StaffSetupPath + "/periods/0/texts", Min: staff.RoleAdmin, handler: (*Server).staffSavePeriodTexts},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/api-keys", Min: staff.RoleAdmin, handler: (*Server).staffCreateAPIKey},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/api-keys/:id/revoke", Example: server.StaffSetupPath + "/api-keys/0/revoke", Min: staff.RoleAdmin, handler: (*Server).staffRevokeAPIKey},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/staff", Min: staff.RoleAdmin, handler: (*Server).staffAddStaff},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/staff/:id/role", Example: server.StaffSetupPath + "/staff/0/role", Min: staff.RoleAdmin, handler: (*Server).staffChangeRole},
		{Method: http.MethodPost, Path: server.StaffSetupPath + "/staff/:id/disable", Example: server.StaffSetupPath + "/staff/0/disable", Min: staff.RoleAdmin, handler: (*Server).staffDisableStaff},
		{Method: http.MethodGet, Path: server.StaffDefinitionsPath, Min: staff.RoleAdmin, handler: (*Server).staffDefinitionsPage},
		{Method: http.MethodPost, Path: server.StaffDefinitionsPath, Min: staff.RoleAdmin, handler: (*Server).staffUploadDefinition},
		{Method: http.MethodGet, Path: server.StaffWebhooksPath, Min: staff.RoleAdmin, handler: (*Server).staffWebhooksPage},
		{Method: http.MethodPost, Path: server.StaffWebhooksPath, Min: staff.RoleAdmin, handler: (*Server).staffAddWebhook},
		{Method: http.MethodGet, Path: server.StaffWebhooksPath + "/:id", Example: server.StaffWebhooksPath + "/0", Min: staff.RoleAdmin, handler: (*Server).staffWebhookDeliveries},
		{Method: http.MethodPost, Path: server.StaffWebhooksPath + "/:id/active", Example: server.StaffWebhooksPath + "/0/active", Min: staff.RoleAdmin, handler: (*Server).staffSetWebhookActive},
		{Method: http.MethodPost, Path: server.StaffWebhooksPath + "/:id/rotate", Example: server.StaffWebhooksPath + "/0/rotate", Min: staff.RoleAdmin, handler: (*Server).staffRotateWebhook},
		{Method: http.MethodPost, Path: server.StaffWebhooksPath + "/:id/delete", Example: server.StaffWebhooksPath + "/0/delete", Min: staff.RoleAdmin, handler: (*Server).staffDeleteWebhook},
		{Method: http.MethodPost, Path: server.StaffWebhooksPath + "/:id/deliveries/:delivery/replay", Example: server.StaffWebhooksPath + "/0/deliveries/0/replay", Min: staff.RoleAdmin, handler: (*Server).staffReplayWebhook},
		{Method: http.MethodGet, Path: server.StaffPersonsPath + "/:id", Example: server.StaffPersonsPath + "/1", Min: staff.RoleRegistrar, handler: (*Server).StaffPersonData},
		{Method: http.MethodGet, Path: server.StaffPersonsPath + "/:id/export.json", Example: server.StaffPersonsPath + "/1/export.json", Min: staff.RoleRegistrar, handler: (*Server).StaffPersonExport},
		{Method: http.MethodPost, Path: server.StaffPersonsPath + "/:id/erase", Example: server.StaffPersonsPath + "/0/erase", Min: staff.RoleAdmin, handler: (*Server).StaffErasePerson},
		{Method: http.MethodGet, Path: server.StaffDataRequestsPath, Min: staff.RoleRegistrar, handler: (*Server).StaffDataRequests},
		{Method: http.MethodPost, Path: server.StaffDataRequestsPath + "/:id/done", Example: server.StaffDataRequestsPath + "/0/done", Min: staff.RoleRegistrar, handler: (*Server).StaffCompleteDataRequest},
		{Method: http.MethodPost, Path: server.StaffDefinitionsPath + "/:id/activate", Example: server.StaffDefinitionsPath + "/0/activate", Min: staff.RoleAdmin, handler: (*Server).staffActivateDefinition},
	}
	return append(routes, setupSectionRoutes()...)
}

// MountStaff adds the staff sign-in and every row of StaffRoutes behind
// requireStaff.
func (s *Server) MountStaff(e *echo.Echo) {
	e.GET(server.StaffLoginPath, s.StaffLoginPage)
	e.GET(server.StaffLoginPath+"/start", s.StaffLogin)
	e.GET(server.StaffCallbackPath, s.StaffCallback)
	e.POST(server.StaffLogoutPath, s.StaffLogout)
	s.StaffPaths = map[string]bool{}
	for _, r := range StaffRoutes() {
		s.StaffPaths[server.StaffPrefix+r.Path] = true
		h := r.handler
		e.Add(r.Method, server.StaffPrefix+r.Path, s.RequireStaff(r.Min, func(c echo.Context) error { return h(s, c) }))
	}
}
