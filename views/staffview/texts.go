package staffview

import (
	"context"

	"portal/views/lang"
)

// Texts are the staff pages' texts, in one place so that a
// translation can replace them. Dynamic texts (names, amounts) come from
// the view models. Handlers use the texts of their own messages (errors,
// results) from here too.
type Texts struct {
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

// staffTexts are the staff pages' texts in every language: the group staff of
// views/lang/locales/staff.<code>.json.
var staffTexts = lang.LoadTexts[Texts]("staff")

// Text holds them in English.
var Text = staffTexts.For("en")

// TextIn is the staff pages' texts in the language of ctx.
func TextIn(ctx context.Context) *Texts { return staffTexts.In(ctx) }
