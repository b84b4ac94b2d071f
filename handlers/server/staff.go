package server

import (
	"errors"
	"strings"

	"portal/engine/staff"
	"portal/relay/oidc"
	"portal/relay/session"
)

// What the centre knows of the staff pages: their paths, and what their
// sign-in needs (StaffDeps). The paths below StaffPrefix are named by the
// navigation, the upload limit, the route table and the admin API's role
// table; the centre's organisation scope names the sign-in's callback.

// Staff routes of the sign-in.
const (
	// StaffPrefix starts every staff page.
	StaffPrefix = "/staff"
	// StaffLoginPath starts a staff sign-in: GET /staff/login?rd=/staff/...
	StaffLoginPath = StaffPrefix + "/login"
	// StaffCallbackPath is where the IdP returns to after a staff sign-in.
	StaffCallbackPath = StaffPrefix + "/auth/callback"
	// StaffLogoutPath ends the staff session: POST /staff/logout.
	StaffLogoutPath = StaffPrefix + "/logout"
	// StaffCookieName names the staff session cookie.
	StaffCookieName = "portal_staff"
)

// StaffDebitsPath holds the collection runs: GET and POST /staff/debits,
// GET /staff/debits/{id}, GET /staff/debits/{id}/file, POST
// /staff/debits/{id}/sent and POST /staff/debits/{id}/cancel.
const StaffDebitsPath = "/debits"

// StaffDefinitionsPath is the definitions page; a POST to it uploads.
const StaffDefinitionsPath = "/processes"

// StaffImportPath takes a person import: POST /staff/invitations/import.
const StaffImportPath = "/invitations/import"

// StaffInvitePath sends invitations: POST /staff/invitations/send.
const StaffInvitePath = "/invitations/send"

// OpenPaymentsPath is the treasurer's list of unpaid orders below StaffPrefix.
const OpenPaymentsPath = "/open-payments"

// StaffStatementPath takes a bank statement: POST /staff/payments/statement.
const StaffStatementPath = "/payments/statement"

// StaffCreditsPath holds the kept bank credits: POST
// /staff/payments/credits/{id}/resolve.
const StaffCreditsPath = "/payments/credits"

// StaffSetupPath is the setup: the list of sections, each below it.
const StaffSetupPath = "/setup"

// StaffWebhooksPath is the webhooks page: GET /staff/webhooks.
const StaffWebhooksPath = "/webhooks"

// YearReportPath is the year-end report below StaffPrefix; its CSV and
// PDF add .csv and .pdf.
const YearReportPath = "/year-report"

// Paths of the personal data and data protection pages.
const (
	StaffPersonsPath      = "/persons"
	StaffDataRequestsPath = "/data-requests"
	StaffAccessLogPath    = "/access-log"
)

// StaffDeps is what the staff pages need beyond the rest of the server.
// Its zero value leaves staff sign-in off (the pages then say so).
type StaffDeps struct {
	// Provider is the IdP, with StaffCallbackPath as its redirect address.
	Provider *oidc.Provider
	// Attempts keeps staff sign-in attempts, scoped to StaffCallbackPath.
	Attempts *oidc.AttemptCookies
	// Sessions issues the staff session cookie (StaffCookieName).
	Sessions *session.Manager
	// RoleClaim names an ID token claim (a string or a list of strings,
	// e.g. "groups") whose values RoleMap maps to a role granted without
	// a staff record; "" grants none.
	RoleClaim string
	// RoleMap maps a claim value to a role, for every organisation or
	// (StaffRoleGrant.Organisation) for one.
	RoleMap []StaffRoleGrant
	// BaseURL is PORTAL_BASE_URL: the callback is on it, except for a
	// club on a hostname of its own, whose callback is on that host.
	BaseURL string
}

// StaffRoleGrant maps one value of the role claim to a role.
type StaffRoleGrant struct {
	// Organisation is the slug the grant is limited to; "" for all.
	Organisation string
	Value        string
	Role         staff.StaffRole
}

// ParseStaffRoleMap reads PORTAL_STAFF_ROLE_MAP: comma-separated
// "value=role" or "slug:value=role" entries, e.g.
// "club-admins=admin,north:treasurers=treasurer".
func ParseStaffRoleMap(s string) ([]StaffRoleGrant, error) {
	var out []StaffRoleGrant
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		value, role, ok := strings.Cut(part, "=")
		r, valid := staff.ParseStaffRole(role)
		if !ok || !valid || strings.TrimSpace(value) == "" {
			return nil, errors.New(`want entries like "club-admins=admin" or "slug:treasurers=treasurer"`)
		}
		g := StaffRoleGrant{Value: strings.TrimSpace(value), Role: r}
		if org, v, ok := strings.Cut(g.Value, ":"); ok {
			g.Organisation, g.Value = strings.TrimSpace(org), strings.TrimSpace(v)
		}
		out = append(out, g)
	}
	return out, nil
}
