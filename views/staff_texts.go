package views

// StaffTexts are the staff pages' texts, in one place so that a
// translation can replace them. Dynamic texts (names, amounts) come from
// the view models. Handlers use the texts of their own messages (errors,
// results) from here too.
type StaffTexts struct {
	// Frame
	Product, Navigation, SignedInAs, SignOut, Menu string
	// Navigation
	NavOverview, NavRegistrations, NavAudit string
	// Sign-in
	SignInTitle, SignInIntro, SignInButton, SignedOut, Continue string
	// Errors
	SignInOff, NoOrganisation, IdPUnavailable, SignInExpired, SignInCancelled, SignInFailed,
	NotStaff, SignInRequired, Forbidden, NotFound, Invalid, Unavailable, Internal, ErrorTitle, BackToOverview string
	// Confirm before destroy
	ConfirmTitle, ConfirmButton, Cancel string
	// Audit log
	AuditTitle, AuditIntro, AuditWhen, AuditWho, AuditWhat, AuditTarget, AuditChange, AuditBefore, AuditAfter,
	AuditEmpty, AuditOlder string
	// Roles, for display
	RoleViewer, RoleRegistrar, RoleTreasurer, RoleAdmin string
}

// StaffText holds the staff pages' texts in English.
var StaffText = StaffTexts{
	Product:    "Staff",
	Navigation: "Staff navigation",
	SignedInAs: "Signed in as",
	SignOut:    "Sign out",
	Menu:       "Menu",

	NavOverview:      "Overview",
	NavRegistrations: "Registrations",
	NavAudit:         "Audit log",

	SignInTitle:  "Staff sign-in",
	SignInIntro:  "Sign in with your organisation account to see registrations, payments and the season.",
	SignInButton: "Sign in",
	SignedOut:    "You have signed out.",
	Continue:     "Continue to the staff pages",

	SignInOff:       "Staff sign-in is not configured on this portal (PORTAL_OIDC_ISSUER).",
	NoOrganisation:  "No organisation is served at this address.",
	IdPUnavailable:  "The sign-in service cannot be reached right now. Please try again shortly.",
	SignInExpired:   "This sign-in was not started here, has expired or was already used. Please sign in again.",
	SignInCancelled: "The sign-in was cancelled or refused by the identity provider.",
	SignInFailed:    "The identity provider's answer could not be verified. Please sign in again.",
	NotStaff:        "You are not a staff member of this organisation, or your e-mail address is not verified by the identity provider. Ask an administrator of your club to add you.",
	SignInRequired:  "Your staff sign-in has ended. Sign in again to continue.",
	Forbidden:       "Your role does not allow this. Ask an administrator of your club if you need it.",
	NotFound:        "This page or record does not exist in your organisation.",
	Invalid:         "The request was not valid.",
	Unavailable:     "The service is temporarily unavailable. Please try again shortly.",
	Internal:        "Something went wrong. Please try again; if it happens again, tell your administrator the request id below.",
	ErrorTitle:      "Something is not right",
	BackToOverview:  "Back to the overview",

	ConfirmTitle:  "Please confirm",
	ConfirmButton: "Yes, do it",
	Cancel:        "Cancel",

	AuditTitle:  "Audit log",
	AuditIntro:  "Every change made by staff, newest first. Entries cannot be changed or deleted.",
	AuditWhen:   "When",
	AuditWho:    "Who",
	AuditWhat:   "Action",
	AuditTarget: "Target",
	AuditChange: "Change",
	AuditBefore: "Before",
	AuditAfter:  "After",
	AuditEmpty:  "No changes recorded yet.",
	AuditOlder:  "Older entries",

	RoleViewer:    "Viewer",
	RoleRegistrar: "Registrar",
	RoleTreasurer: "Treasurer",
	RoleAdmin:     "Administrator",
}
