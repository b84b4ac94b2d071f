package staffview

import (
	"context"

	"portal/views/lang"
)

// DebitTexts are the texts of the treasurer's direct-debit
// collection runs (issue 29): the list, the form that prepares a run, one
// run with its debits and actions, and the two collection settings of the
// setup page's payments section.
type DebitTexts struct {
	NavDebits, Title, Intro, PaymentsLink, PaymentsLinkHint string
	// Preparing a run.
	PrepareTitle, Until, UntilHint, Prepare, NoCreditor, NothingDue, NothingDueInRun, NoneCollectable, AttentionLink, BadUntil string
	// The list of runs.
	RunsTitle, Empty, Run, Created, By, UntilCol, Count, Total, Version, Status, Open string
	StatusPrepared, StatusSent, StatusCancelled, SentAt, CancelledAt                  string
	// One run.
	RunTitle, RunIntro, DebitsTitle, EndToEnd, Registration, Mandate, Holder, Account, Amount, Due, Sequence,
	SeqFirst, SeqRecurring, DebitStatus, DebitInRun, DebitCollected, DebitReturned, DebitCancelled, Amended, MandateEnded, NoDebits, Back string
	// The due debits a run left out of its file.
	LeftOutTitle, LeftOutIntro, LeftOutOrder string
	// The run's actions and their confirmations.
	ActionsTitle, Download, DownloadHint, MarkSent, MarkSentHint, Cancel, CancelHint,
	SentQuestion, SentDetail, SentYes, SentNo, CancelQuestion, CancelDetail, CancelYes, CancelNo string
	// What an action did (after the redirect) and why it could not.
	DonePrepared, DoneSent, DoneSentProblems, DoneAlreadySent, DoneCancelled, DoneAlreadyCancelled, IsSent, IsCancelled string
	// The setup page's collection settings.
	SetupCollectionDay, SetupCollectionDayHint, SetupReturnFee, SetupReturnFeeHint string
}

// staffDebitTexts are the direct debit pages' texts in every language: the group staff_debits of
// views/lang/locales/staff.<code>.json.
var staffDebitTexts = lang.LoadTexts[DebitTexts]("staff_debits")

// DebitText holds them in English.
var DebitText = staffDebitTexts.For("en")

// DebitTextIn is the direct debit pages' texts in the language of ctx.
func DebitTextIn(ctx context.Context) *DebitTexts { return staffDebitTexts.In(ctx) }
