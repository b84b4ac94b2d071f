package staffview

import (
	"context"

	"portal/views/lang"
)

// RegistrationTexts are the texts of one registration's page that
// make it read as a record: the household with its memberships, answers
// as the member saw them, the payment history in words, the capture's
// result and the questions before an action.
type RegistrationTexts struct {
	// Household
	HouseholdIntro, Born, NoMembership string
	// Answers
	Yes, No, NotAsked, ArchivedKept, ArchivedRemoved string
	// Order
	TransferRefHint string
	// History
	History, HistoryIntro, HistoryEmpty, Reference,
	ProviderBank, ProviderCard, ProviderTest,
	AttemptStarted, EvReceived, EvPart, EvConfirmed, EvFailed, EvCancelled, EvPending, EvOpen, EvChecked, EvReturned,
	Booked, RecordedBy, RefundDue, RefundDone,
	MsgConfirmation, MsgPaymentLink, MsgReminder, MsgTransferRequest, MsgWelcome, MsgExpiry, MsgRenewal, MsgResume,
	MsgRefund, MsgDebitReturned, MsgMandate, MsgOther, MsgTo, MsgToRegistration string
	// Capture: what the treasurer's capture did, in words
	CapturedComplete, CapturedPart, CapturedSecond, CaptureOpen, CaptureOpenHint string
	// Questions before an action: what the buttons do
	CancelYes, CancelNo, ResetYes, ResetNo, RefundYes, RefundNo string
}

// staffRegistrationTexts are the registration page's texts in every language: the group staff_registration of
// views/lang/locales/staff.<code>.json.
var staffRegistrationTexts = lang.LoadTexts[RegistrationTexts]("staff_registration")

// RegistrationText holds them in English.
var RegistrationText = staffRegistrationTexts.For("en")

// RegistrationTextIn is the registration page's texts in the language of ctx.
func RegistrationTextIn(ctx context.Context) *RegistrationTexts {
	return staffRegistrationTexts.In(ctx)
}
