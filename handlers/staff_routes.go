package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine/staff"
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
		{Method: http.MethodGet, Path: "/audit", Min: staff.RoleViewer, handler: (*Server).staffAuditPage},
		{Method: http.MethodGet, Path: "/registrations", Min: staff.RoleViewer, handler: (*Server).staffRegistrations},
		{Method: http.MethodGet, Path: "/registrations.csv", Min: staff.RoleTreasurer, handler: (*Server).staffRegistrationsCSV},
		{Method: http.MethodGet, Path: "/registrations/:id", Example: "/registrations/1", Min: staff.RoleViewer, handler: (*Server).staffRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-confirmation", Example: "/registrations/1/resend-confirmation", Min: staff.RoleRegistrar, handler: (*Server).staffResendConfirmation},
		{Method: http.MethodPost, Path: "/registrations/:id/resend-payment-link", Example: "/registrations/1/resend-payment-link", Min: staff.RoleRegistrar, handler: (*Server).staffResendPaymentLink},
		{Method: http.MethodPost, Path: "/registrations/:id/reset", Example: "/registrations/1/reset", Min: staff.RoleRegistrar, handler: (*Server).staffResetRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/cancel", Example: "/registrations/1/cancel", Min: staff.RoleRegistrar, handler: (*Server).staffCancelRegistration},
		{Method: http.MethodPost, Path: "/registrations/:id/capture", Example: "/registrations/1/capture", Min: staff.RoleTreasurer, handler: (*Server).staffCapture},
		{Method: http.MethodPost, Path: "/registrations/:id/refund", Example: "/registrations/1/refund", Min: staff.RoleTreasurer, handler: (*Server).staffRefund},
		{Method: http.MethodPost, Path: "/mandates/:id/revoke", Example: "/mandates/0/revoke", Min: staff.RoleTreasurer, handler: (*Server).staffRevokeMandate},
		{Method: http.MethodGet, Path: openPaymentsPath, Min: staff.RoleTreasurer, handler: (*Server).staffOpenPayments},
		{Method: http.MethodGet, Path: openPaymentsPath + ".csv", Min: staff.RoleTreasurer, handler: (*Server).staffOpenPaymentsCSV},
		{Method: http.MethodPost, Path: openPaymentsPath + "/resend-payment-link", Min: staff.RoleTreasurer, handler: (*Server).staffResendPaymentLinks},
		{Method: http.MethodGet, Path: yearReportPath, Min: staff.RoleTreasurer, handler: (*Server).staffYearReport},
		{Method: http.MethodGet, Path: yearReportPath + ".csv", Min: staff.RoleTreasurer, handler: (*Server).staffYearReportCSV},
		{Method: http.MethodGet, Path: yearReportPath + ".pdf", Min: staff.RoleTreasurer, handler: (*Server).staffYearReportPDF},
		{Method: http.MethodGet, Path: "/jobs", Min: staff.RoleViewer, handler: (*Server).staffJobsPage},
		{Method: http.MethodPost, Path: "/jobs/:id/retry", Example: "/jobs/0/retry", Min: staff.RoleRegistrar, handler: (*Server).staffRetryJob},
		{Method: http.MethodPost, Path: "/jobs/run", Min: staff.RoleAdmin, handler: (*Server).staffRunJob},
		{Method: http.MethodGet, Path: "/payments", Min: staff.RoleViewer, handler: (*Server).staffPaymentsPage},
		{Method: http.MethodPost, Path: staffStatementPath, Min: staff.RoleTreasurer, handler: (*Server).staffImportStatement},
		{Method: http.MethodGet, Path: staffDebitsPath, Min: staff.RoleViewer, handler: (*Server).staffDebitRuns},
		{Method: http.MethodPost, Path: staffDebitsPath, Min: staff.RoleTreasurer, handler: (*Server).staffPrepareDebitRun},
		{Method: http.MethodGet, Path: staffDebitsPath + "/:id", Example: staffDebitsPath + "/0", Min: staff.RoleViewer, handler: (*Server).staffDebitRun},
		{Method: http.MethodGet, Path: staffDebitsPath + "/:id/file", Example: staffDebitsPath + "/0/file", Min: staff.RoleTreasurer, handler: (*Server).staffDebitRunFile},
		{Method: http.MethodPost, Path: staffDebitsPath + "/:id/sent", Example: staffDebitsPath + "/0/sent", Min: staff.RoleTreasurer, handler: (*Server).staffMarkDebitRunSent},
		{Method: http.MethodPost, Path: staffDebitsPath + "/:id/cancel", Example: staffDebitsPath + "/0/cancel", Min: staff.RoleTreasurer, handler: (*Server).staffCancelDebitRun},
		{Method: http.MethodPost, Path: staffCreditsPath + "/:id/resolve", Example: staffCreditsPath + "/0/resolve", Min: staff.RoleTreasurer, handler: (*Server).staffResolveCredit},
		{Method: http.MethodGet, Path: "/invitations", Min: staff.RoleRegistrar, handler: (*Server).staffInvitationsPage},
		{Method: http.MethodPost, Path: staffImportPath, Min: staff.RoleRegistrar, handler: (*Server).staffImportPersons},
		{Method: http.MethodPost, Path: staffInvitePath, Min: staff.RoleRegistrar, handler: (*Server).staffSendInvitations},
		{Method: http.MethodPost, Path: "/invitations/:id/revoke", Example: "/invitations/0/revoke", Min: staff.RoleRegistrar, handler: (*Server).staffRevokeInvitation},
		{Method: http.MethodGet, Path: staffSetupPath, Min: staff.RoleAdmin, handler: (*Server).staffSetupPage},
		{Method: http.MethodPost, Path: staffSetupPath + "/organisation", Min: staff.RoleAdmin, handler: (*Server).staffSaveOrganisation},
		{Method: http.MethodPost, Path: staffSetupPath + "/languages", Min: staff.RoleAdmin, handler: (*Server).staffSaveLanguages},
		{Method: http.MethodPost, Path: staffSetupPath + "/payments", Min: staff.RoleAdmin, handler: (*Server).staffSavePayments},
		{Method: http.MethodPost, Path: staffSetupPath + "/payment-methods", Min: staff.RoleAdmin, handler: (*Server).staffSavePaymentMethods},
		{Method: http.MethodPost, Path: staffSetupPath + "/messages", Min: staff.RoleAdmin, handler: (*Server).staffSaveMessages},
		{Method: http.MethodPost, Path: staffSetupPath + "/retention", Min: staff.RoleAdmin, handler: (*Server).staffSaveRetention},
		{Method: http.MethodGet, Path: staffAccessLogPath, Min: staff.RoleAdmin, handler: (*Server).staffAccessLogPage},
		{Method: http.MethodPost, Path: staffSetupPath + "/types", Min: staff.RoleAdmin, handler: (*Server).staffAddType},
		{Method: http.MethodPost, Path: staffSetupPath + "/types/:id", Example: staffSetupPath + "/types/0", Min: staff.RoleAdmin, handler: (*Server).staffChangeType},
		{Method: http.MethodPost, Path: staffSetupPath + "/types/:id/delete", Example: staffSetupPath + "/types/0/delete", Min: staff.RoleAdmin, handler: (*Server).staffDeleteType},
		{Method: http.MethodPost, Path: staffSetupPath + "/periods/:id/status", Example: staffSetupPath + "/periods/0/status", Min: staff.RoleAdmin, handler: (*Server).staffSetPeriodStatus},
		{Method: http.MethodPost, Path: staffSetupPath + "/periods/:id/texts", Example: staffSetupPath + "/periods/0/texts", Min: staff.RoleAdmin, handler: (*Server).staffSavePeriodTexts},
		{Method: http.MethodPost, Path: staffSetupPath + "/api-keys", Min: staff.RoleAdmin, handler: (*Server).staffCreateAPIKey},
		{Method: http.MethodPost, Path: staffSetupPath + "/api-keys/:id/revoke", Example: staffSetupPath + "/api-keys/0/revoke", Min: staff.RoleAdmin, handler: (*Server).staffRevokeAPIKey},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff", Min: staff.RoleAdmin, handler: (*Server).staffAddStaff},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff/:id/role", Example: staffSetupPath + "/staff/0/role", Min: staff.RoleAdmin, handler: (*Server).staffChangeRole},
		{Method: http.MethodPost, Path: staffSetupPath + "/staff/:id/disable", Example: staffSetupPath + "/staff/0/disable", Min: staff.RoleAdmin, handler: (*Server).staffDisableStaff},
		{Method: http.MethodGet, Path: staffDefinitionsPath, Min: staff.RoleAdmin, handler: (*Server).staffDefinitionsPage},
		{Method: http.MethodPost, Path: staffDefinitionsPath, Min: staff.RoleAdmin, handler: (*Server).staffUploadDefinition},
		{Method: http.MethodGet, Path: staffWebhooksPath, Min: staff.RoleAdmin, handler: (*Server).staffWebhooksPage},
		{Method: http.MethodPost, Path: staffWebhooksPath, Min: staff.RoleAdmin, handler: (*Server).staffAddWebhook},
		{Method: http.MethodGet, Path: staffWebhooksPath + "/:id", Example: staffWebhooksPath + "/0", Min: staff.RoleAdmin, handler: (*Server).staffWebhookDeliveries},
		{Method: http.MethodPost, Path: staffWebhooksPath + "/:id/active", Example: staffWebhooksPath + "/0/active", Min: staff.RoleAdmin, handler: (*Server).staffSetWebhookActive},
		{Method: http.MethodPost, Path: staffWebhooksPath + "/:id/rotate", Example: staffWebhooksPath + "/0/rotate", Min: staff.RoleAdmin, handler: (*Server).staffRotateWebhook},
		{Method: http.MethodPost, Path: staffWebhooksPath + "/:id/delete", Example: staffWebhooksPath + "/0/delete", Min: staff.RoleAdmin, handler: (*Server).staffDeleteWebhook},
		{Method: http.MethodPost, Path: staffWebhooksPath + "/:id/deliveries/:delivery/replay", Example: staffWebhooksPath + "/0/deliveries/0/replay", Min: staff.RoleAdmin, handler: (*Server).staffReplayWebhook},
		{Method: http.MethodGet, Path: staffPersonsPath + "/:id", Example: staffPersonsPath + "/1", Min: staff.RoleRegistrar, handler: (*Server).staffPersonData},
		{Method: http.MethodGet, Path: staffPersonsPath + "/:id/export.json", Example: staffPersonsPath + "/1/export.json", Min: staff.RoleRegistrar, handler: (*Server).staffPersonExport},
		{Method: http.MethodPost, Path: staffPersonsPath + "/:id/erase", Example: staffPersonsPath + "/0/erase", Min: staff.RoleAdmin, handler: (*Server).staffErasePerson},
		{Method: http.MethodGet, Path: staffDataRequestsPath, Min: staff.RoleRegistrar, handler: (*Server).staffDataRequests},
		{Method: http.MethodPost, Path: staffDataRequestsPath + "/:id/done", Example: staffDataRequestsPath + "/0/done", Min: staff.RoleRegistrar, handler: (*Server).staffCompleteDataRequest},
		{Method: http.MethodPost, Path: staffDefinitionsPath + "/:id/activate", Example: staffDefinitionsPath + "/0/activate", Min: staff.RoleAdmin, handler: (*Server).staffActivateDefinition},
	}
	return append(routes, setupSectionRoutes()...)
}

// mountStaff adds the staff sign-in and every row of StaffRoutes behind
// requireStaff.
func (s *Server) mountStaff(e *echo.Echo) {
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
