package server

// Routes of the staff pages, below StaffPrefix. The navigation
// (staff_pages.go), the upload limit (staff_upload.go), the route table and
// the admin API's role table all name them.

// staffDebitsPath holds the collection runs: GET and POST /staff/debits,
// GET /staff/debits/{id}, GET /staff/debits/{id}/file, POST
// /staff/debits/{id}/sent and POST /staff/debits/{id}/cancel.
const StaffDebitsPath = "/debits"

// staffDefinitionsPath is the definitions page; a POST to it uploads.
const StaffDefinitionsPath = "/processes"

// staffImportPath takes a person import: POST /staff/invitations/import.
const StaffImportPath = "/invitations/import"

// staffInvitePath sends invitations: POST /staff/invitations/send.
const StaffInvitePath = "/invitations/send"

// openPaymentsPath is the treasurer's list of unpaid orders below StaffPrefix.
const OpenPaymentsPath = "/open-payments"

// staffStatementPath takes a bank statement: POST /staff/payments/statement.
const StaffStatementPath = "/payments/statement"

// staffCreditsPath holds the kept bank credits: POST
// /staff/payments/credits/{id}/resolve.
const StaffCreditsPath = "/payments/credits"

// staffSetupPath is the setup: the list of sections, each below it.
const StaffSetupPath = "/setup"

// staffWebhooksPath is the webhooks page: GET /staff/webhooks.
const StaffWebhooksPath = "/webhooks"

// yearReportPath is the year-end report below StaffPrefix; its CSV and
// PDF add .csv and .pdf.
const YearReportPath = "/year-report"

// Paths of the personal data and data protection pages.
const (
	StaffPersonsPath      = "/persons"
	StaffDataRequestsPath = "/data-requests"
	StaffAccessLogPath    = "/access-log"
)
