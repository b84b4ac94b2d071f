package server

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

// StaffRoutes is the route table of the staff pages. Add a row per route;
// the setup sections' pages come from setupSections.
func StaffRoutes() []StaffRoute {
	routes := []StaffRoute{
		{Method: http.MethodGet, Path: "", Min: engine.RoleViewer, handler: (*Server).staffOverview},
		{Method: http.MethodGet, Path: "/audit", Min: engine.RoleViewer, handler: (*Server).staffAuditPage},
		{Method: http.MethodGet, Path: "/registrations", Min: engine.RoleViewer, handler: (*Server).staffRegistrations},
		{Method: http.MethodGet, Path: "/registrations.csv", Min: engine.RoleTreasurer, handler: (*Server).staffRegistrationsCSV},
		{Method: http.MethodGet, Path: "/registrations/:id", Example: "/registrations/1", Min: engine.RoleViewer, handler: (*Server).staffRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-confirmation", Example: "/registrations/1/resend-confirmation", Min: engine.RoleRegistrar, handler: (*Server).staffResendConfirmation},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-payment-link", Example: "/registrations/1/resend-payment-link", Min: engine.RoleRegistrar, handler: (*Server).staffResendPaymentLink},
		{Method: http.MethodPost, Path: "/registrations/:id/reset", Example: "/registrations/1/reset", Min: engine.RoleRegistrar, handler: (*Server).staffResetRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/cancel", Example: "/registrations/1/cancel", Min: engine.RoleRegistrar, handler: (*Server).staffCancelRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/capture", Example: "/registrations/1/capture", Min: engine.RoleTreasurer, handler: (*Server).staffCapture},
		{Method: http.MethodPost, Path: "/registrations/:id/refund", Example: "/registrations/1/refund", Min: engine.RoleTreasurer, handler: (*Server).staffRefund},
		{Method: http.MethodPost, Path: "/mandates/:id/revoke", Example: "/mandates/0/revoke", Min: engine.RoleTreasurer, handler: (*Server).staffRevokeMandate},
		{Method: http.MethodGet, Path: openPaymentsPath, Min: engine.RoleTreasurer, handler: (*Server).staffOpenPayments},
		{Method: http.MethodGet, Path: openPaymentsPath + ".csv", Min: engine.RoleTreasurer, handler: (*Server).staffOpenPaymentsCSV},
		{Method: http.MethodPost, Path: openPaymentsPath + "/resend-payment-link", Min: engine.RoleTreasurer, handler: (*Server).staffResendPaymentLinks},
		{Method: http.MethodGet, Path: yearReportPath, Min: engine.RoleTreasurer, handler: (*Server).staffYearReport},
		{Method: http.MethodGet, Path: yearReportPath + ".csv", Min: engine.RoleTreasurer, handler: (*Server).staffYearReportCSV},
		{Method: http.MethodGet, Path: yearReportPath + ".pdf", Min: engine.RoleTreasurer, handler: (*Server).staffYearReportPDF},
		{Method: http.MethodGet, Path: "/jobs", Min: engine.RoleViewer, handler: (*Server).staffJobsPage},
		{Method: http.MethodPost, Path: "/jobs/:id/retry", Example: "/jobs/0/retry", Min: engine.RoleRegistrar, handler: (*Server).staffRetryJob},
		{Method: http.MethodPost, Path: "/jobs/run", Min: engine.RoleAdmin, handler: (*Server).staffRunJob},
		{Method: http.MethodGet, Path: "/payments", Min: engine.RoleViewer, handler: (*Server).staffPaymentsPage},
		{Method: http.MethodPost, Path: staffStatementPath, Min: engine.RoleTreasurer, handler: (*Server).staffImportStatement},
		{Method: http.MethodGet, Path: staffDebitsPath, Min: engine.RoleViewer, handler: (*Server).staffDebitRuns},
		{Method: http.MethodPost, Path: staffDebitsPath, Min: engine.RoleTreasurer, handler: (*Server).staffPrepareDebitRun},
		{Method: http.MethodGet, Path: staffDebitsPath + "/:id", Example: staffDebitsPath + "/0", Min: engine.RoleViewer, handler: (*Server).staffDebitRun},
		{Method: http.MethodGet, Path: staffDebitsPath + "/:id/file", Example: staffDebitsPath + "/0/file", Min: engine.RoleTreasurer, handler: (*Server).staffDebitRunFile},
		{Method: http.MethodPost, Path: staffDebitsPath + "/:id/sent", Example: staffDebitsPath + "/0/sent", Min: engine.RoleTreasurer, handler: (*Server).staffMarkDebitRunSent},
		{Method: http.MethodPost, Path: staffDebitsPath + "/:id/cancel", Example: staffDebitsPath + "/0/cancel", Min: engine.RoleTreasurer, handler: (*Server).staffCancelDebitRun},
		{Method: http.MethodPost, Path: staffCreditsPath + "/:id/resolve", Example: staffCreditsPath + "/0/resolve", Min: engine.RoleTreasurer, handler: (*Server).staffResolveCredit},
		{Method: http.MethodGet, Path: "/invitations", Min: engine.RoleRegistrar, handler: (*Server).staffInvitationsPage},
		{Method: http.MethodPost, Path: StaffImportPath, Min: engine.RoleRegistrar, handler: (*Server).staffImportPersons},
		{Method: http.MethodPost, Path: staffInvitePath, Min: engine.RoleRegistrar, handler: (*Server).staffSendInvitations},
		{Method: http.MethodPost, Path: "/invitations/:id/revoke", Example: "/invitations/0/revoke", Min: engine.RoleRegistrar, handler: (*Server).staffRevokeInvitation},
		{Method: http.MethodGet, Path: StaffSetupPath, Min: engine.RoleAdmin, handler: (*Server).staffSetupPage},
		{Method: http.MethodPost, Path: StaffSetupPath + "/organisation", Min: engine.RoleAdmin, handler: (*Server).staffSaveOrganisation},
		{Method: http.MethodPost, Path: StaffSetupPath + "/languages", Min: engine.RoleAdmin, handler: (*Server).staffSaveLanguages},
		{Method: http.MethodPost, Path: StaffSetupPath + "/payments", Min: engine.RoleAdmin, handler: (*Server).staffSavePayments},
		{Method: http.MethodPost, Path: StaffSetupPath + "/payment-methods", Min: engine.RoleAdmin, handler: (*Server).staffSavePaymentMethods},
		{Method: http.MethodPost, Path: StaffSetupPath + "/messages", Min: engine.RoleAdmin, handler: (*Server).staffSaveMessages},
		{Method: http.MethodPost, Path: StaffSetupPath + "/retention", Min: engine.RoleAdmin, handler: (*Server).staffSaveRetention},
		{Method: http.MethodGet, Path: staffAccessLogPath, Min: engine.RoleAdmin, handler: (*Server).staffAccessLogPage},
		{Method: http.MethodPost, Path: StaffSetupPath + "/types", Min: engine.RoleAdmin, handler: (*Server).staffAddType},
		{Method: http.MethodPost, Path: StaffSetupPath + "/types/:id", Example: StaffSetupPath + "/types/0", Min: engine.RoleAdmin, handler: (*Server).staffChangeType},
		{Method: http.MethodPost, Path: StaffSetupPath + "/types/:id/delete", Example: StaffSetupPath + "/types/0/delete", Min: engine.RoleAdmin, handler: (*Server).staffDeleteType},
		{Method: http.MethodPost, Path: StaffSetupPath + "/periods/:id/status", Example: StaffSetupPath + "/periods/0/status", Min: engine.RoleAdmin, handler: (*Server).staffSetPeriodStatus},
		{Method: http.MethodPost, Path: StaffSetupPath + "/periods/:id/texts", Example: StaffSetupPath + "/periods/0/texts", Min: engine.RoleAdmin, handler: (*Server).staffSavePeriodTexts},
		{Method: http.MethodPost, Path: StaffSetupPath + "/api-keys", Min: engine.RoleAdmin, handler: (*Server).staffCreateAPIKey},
		{Method: http.MethodPost, Path: StaffSetupPath + "/api-keys/:id/revoke", Example: StaffSetupPath + "/api-keys/0/revoke", Min: engine.RoleAdmin, handler: (*Server).staffRevokeAPIKey},
		{Method: http.MethodPost, Path: StaffSetupPath + "/staff", Min: engine.RoleAdmin, handler: (*Server).staffAddStaff},
		{Method: http.MethodPost, Path: StaffSetupPath + "/staff/:id/role", Example: StaffSetupPath + "/staff/0/role", Min: engine.RoleAdmin, handler: (*Server).staffChangeRole},
		{Method: http.MethodPost, Path: StaffSetupPath + "/staff/:id/disable", Example: StaffSetupPath + "/staff/0/disable", Min: engine.RoleAdmin, handler: (*Server).staffDisableStaff},
		{Method: http.MethodGet, Path: StaffDefinitionsPath, Min: engine.RoleAdmin, handler: (*Server).staffDefinitionsPage},
		{Method: http.MethodPost, Path: StaffDefinitionsPath, Min: engine.RoleAdmin, handler: (*Server).staffUploadDefinition},
		{Method: http.MethodGet, Path: StaffWebhooksPath, Min: engine.RoleAdmin, handler: (*Server).staffWebhooksPage},
		{Method: http.MethodPost, Path: StaffWebhooksPath, Min: engine.RoleAdmin, handler: (*Server).staffAddWebhook},
		{Method: http.MethodGet, Path: StaffWebhooksPath + "/:id", Example: StaffWebhooksPath + "/0", Min: engine.RoleAdmin, handler: (*Server).staffWebhookDeliveries},
		{Method: http.MethodPost, Path: StaffWebhooksPath + "/:id/active", Example: StaffWebhooksPath + "/0/active", Min: engine.RoleAdmin, handler: (*Server).staffSetWebhookActive},
		{Method: http.MethodPost, Path: StaffWebhooksPath + "/:id/rotate", Example: StaffWebhooksPath + "/0/rotate", Min: engine.RoleAdmin, handler: (*Server).staffRotateWebhook},
		{Method: http.MethodPost, Path: StaffWebhooksPath + "/:id/delete", Example: StaffWebhooksPath + "/0/delete", Min: engine.RoleAdmin, handler: (*Server).staffDeleteWebhook},
		{Method: http.MethodPost, Path: StaffWebhooksPath + "/:id/deliveries/:delivery/replay", Example: StaffWebhooksPath + "/0/deliveries/0/replay", Min: engine.RoleAdmin, handler: (*Server).staffReplayWebhook},
		{Method: http.MethodGet, Path: StaffPersonsPath + "/:id", Example: StaffPersonsPath + "/1", Min: engine.RoleRegistrar, handler: (*Server).staffPersonData},
		{Method: http.MethodGet, Path: StaffPersonsPath + "/:id/export.json", Example: StaffPersonsPath + "/1/export.json", Min: engine.RoleRegistrar, handler: (*Server).staffPersonExport},
		{Method: http.MethodPost, Path: StaffPersonsPath + "/:id/erase", Example: StaffPersonsPath + "/0/erase", Min: engine.RoleAdmin, handler: (*Server).staffErasePerson},
		{Method: http.MethodGet, Path: staffDataRequestsPath, Min: engine.RoleRegistrar, handler: (*Server).staffDataRequests},
		{Method: http.MethodPost, Path: staffDataRequestsPath + "/:id/done", Example: staffDataRequestsPath + "/0/done", Min: engine.RoleRegistrar, handler: (*Server).staffCompleteDataRequest},
		{Method: http.MethodPost, Path: StaffDefinitionsPath + "/:id/activate", Example: StaffDefinitionsPath + "/0/activate", Min: engine.RoleAdmin, handler: (*Server).staffActivateDefinition},
	}
	return append(routes, setupSectionRoutes()...)
}

// mountStaff adds the staff sign-in and every row of StaffRoutes behind
// requireStaff.
func (s *Server) MountStaff(e *echo.Echo) {
	e.GET(StaffLoginPath, s.staffLoginPage)
	e.GET(StaffLoginPath+"/start", s.staffLogin)
	e.GET(StaffCallbackPath, s.staffCallback)
	e.POST(StaffLogoutPath, s.staffLogout)
	s.staffPaths = map[string]bool{}
	for _, r := range StaffRoutes() {
		s.staffPaths[StaffPrefix+r.Path] = true
		h := r.handler
		e.Add(r.Method, StaffPrefix+r.Path, s.requireStaff(r.Min, func(c echo.Context) error { return h(s, c) }))
	}
}
