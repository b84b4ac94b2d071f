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
	AuditTitle, AuditIntro,
	AuditEmpty, AuditOlder string
	// Roles, for display
	RoleViewer, RoleRegistrar, RoleTreasurer, RoleAdmin string
	// Registrations
	RegTitle, RegSearch, RegSearchHint, RegPeriod, RegState, RegType, RegUnpaidDays, RegApply, RegExport, RegEmpty,
	RegNumber, RegHousehold, RegReference, RegTotal, RegUpdated, RegPages, RegPrev, RegNext, RegAll, RegPageText string
	StateInProgress, StateSuspended, StateAwaitingPayment, StatePaid, StateCancelled string
	// Registration detail
	DetTitle, DetSummary, DetUserKey, DetStarted, DetDefinition, DetActions, DetNoActions, DetHousehold,
	DetAnswers, DetOrder, DetPaid, DetNone, DetTransferRef,
	DelSent, DelQueued, DelFailed, DelDead, DelSkipped string
	// Actions
	ActResendConfirmation, ActResendLink, ActReset, ActCancel, ActCapture, ActRefund, CapAmount, CapDate, CapNote, CapStillOwed,
	ConfirmReset, ConfirmResetDetail, ConfirmCancel, ConfirmCancelDetail, ConfirmRefund, ConfirmRefundDetail,
	DoneResentConfirmation, DoneResentLink, DoneReset, DoneCancelled, DoneCaptured, DoneCapturedProblem, DoneCapturedPartial, DoneCapturedSecond, DoneRefunded,
	BadAmount, BadDate, BadFilter string
	// Overview
	OvTitle, OvShow, OvRegistrations, OvMoney, OvExpected, OvReceived, OvRefunded, OvAttention, OvJobs,
	OvChart, OvChartRegistrations, OvChartPayments, OvChartSummary, OvNoPeriod string
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

	AuditTitle: "Audit log",
	AuditIntro: "Every change made by staff, newest first. Entries cannot be changed or deleted.",
	AuditEmpty: "No changes recorded yet.",
	AuditOlder: "Older entries",

	RoleViewer:    "Viewer",
	RoleRegistrar: "Registrar",
	RoleTreasurer: "Treasurer",
	RoleAdmin:     "Administrator",

	RegTitle:      "Registrations",
	RegSearch:     "Search",
	RegSearchHint: "Name, e-mail, user key or payment reference",
	RegPeriod:     "Period",
	RegState:      "State",
	RegType:       "Membership type",
	RegUnpaidDays: "Unpaid for more than (days)",
	RegApply:      "Apply",
	RegExport:     "Export CSV",
	RegEmpty:      "No registrations match.",
	RegNumber:     "No.",
	RegHousehold:  "Household",
	RegReference:  "Payment reference",
	RegTotal:      "Total",
	RegUpdated:    "Last change",
	RegPages:      "Pages",
	RegPrev:       "Previous page",
	RegNext:       "Next page",
	RegAll:        "All",
	RegPageText:   "%d registrations · page %d of %d",

	StateInProgress:      "In progress",
	StateSuspended:       "Suspended",
	StateAwaitingPayment: "Awaiting payment",
	StatePaid:            "Paid",
	StateCancelled:       "Cancelled",

	DetTitle:      "Registration %d",
	DetSummary:    "Summary",
	DetUserKey:    "User key",
	DetStarted:    "Started",
	DetDefinition: "Process",
	DetActions:    "Actions",
	DetNoActions:  "Nothing to do for your role in this state.",
	DetHousehold:  "Household",
	DetAnswers:    "Answers by step",
	DetOrder:      "Order",
	DetPaid:       "paid",
	DetNone:       "None.",
	DelSent:       "sent %s",
	DelQueued:     "queued",
	DelFailed:     "retrying (attempt %d)",
	DelDead:       "failed",
	DelSkipped:    "not sent (no longer due)",

	ActResendConfirmation: "Resend confirmation",
	ActResendLink:         "Resend payment link",
	ActReset:              "Reset for the member",
	ActCancel:             "Cancel registration",
	ActCapture:            "Capture bank transfer",
	ActRefund:             "Refund",
	CapAmount:             "Amount received",
	CapDate:               "Booked on",
	CapNote:               "Note (optional)",
	ConfirmReset:          "Reset this registration for the member?",
	ConfirmResetDetail:    "Their answers are deleted and an unpaid order is cancelled. They start again from the choice of persons.",
	ConfirmCancel:         "Cancel this registration?",
	ConfirmCancelDetail:   "Its memberships and order are cancelled. Money already received stays recorded; refund it afterwards from this page.",
	ConfirmRefund:         "Refund payment %s?",
	ConfirmRefundDetail:   "Card payments are refunded through the payment provider. A bank transfer is recorded as refunded: make the transfer from the club's account yourself.",

	DoneResentConfirmation: "The confirmation is queued to be sent again.",
	DoneResentLink:         "The payment link is queued to be sent.",
	DoneReset:              "The registration was reset.",
	DoneCancelled:          "The registration was cancelled.",
	DoneCaptured:           "The bank transfer was captured.",
	DoneCapturedProblem:    "The bank transfer was recorded, but its amount or currency does not match: the registration is not completed. Check the payment.",
	DoneCapturedPartial:    "Part of the amount arrived and is recorded. The registration stays open until the rest arrives: what is still owed is shown with the capture form.",
	CapStillOwed:           "%s arrived so far; %s is still owed.",
	DetTransferRef:         "Transfer reference",
	DoneCapturedSecond:     "The bank transfer was recorded as a second payment: the registration was paid already. The amount is owed back to the member: transfer it back, then mark it paid back on the payments page.",
	DoneRefunded:           "The payment was refunded.",

	BadAmount: "Enter the amount received, such as 184.50.",
	BadDate:   "Enter the booking date as YYYY-MM-DD, not in the future.",
	BadFilter: "The filter was not valid.",

	OvTitle:              "Season overview",
	OvShow:               "Show",
	OvRegistrations:      "Registrations",
	OvMoney:              "Money",
	OvExpected:           "Expected (open and paid orders)",
	OvReceived:           "Received",
	OvRefunded:           "Refunded",
	OvAttention:          "Payments needing attention",
	OvJobs:               "Failed jobs (e-mails and other background work)",
	OvChart:              "Registrations and payments per day",
	OvChartRegistrations: "Registrations started",
	OvChartPayments:      "Payments received",
	OvChartSummary:       "%d registrations started and %d payments received in the last %d days",
	OvNoPeriod:           "This organisation has no membership period yet.",
}
