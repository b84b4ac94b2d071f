package staffview

import (
	"context"

	"portal/views/lang"
)

// OpsTexts are the texts of the staff pages for payments, jobs and
// invitations (the operations side), kept apart from Texts so that
// each page's texts are found with its page.
type OpsTexts struct {
	NavPayments, NavJobs, NavInvitations string
	// Jobs
	JobsTitle, JobsIntro, JobsEmpty, JobID, JobKind, JobState, JobAttempts, JobRecipient, JobError, JobDue,
	JobRetry, JobPortalWide, JobRetried string
	JobRunTitle, JobRunIntro, JobRunKind, JobRun, JobRunQueued string
	// Payments
	PaymentsTitle, AttentionTitle, AttentionIntro, AttentionEmpty, AttentionReason, AttentionAmount, AttentionUser,
	AttentionCreated, AttentionProblem, AttentionSecond, AttentionPending, AttentionReturned, AttentionLeftOut string
	// What to do about an attempt needing attention, by reason.
	AttentionHousehold, ActionProblem, ActionSecondByHand, ActionSecondByProvider, ActionReturned, ActionLeftOut, ActionPending string
	StatementTitle, StatementIntro, StatementFile, StatementUpload, StatementNoBank, StatementMissing, StatementTooLarge,
	StatementInvalid, PreviewTitle, PreviewIntro, PreviewNothing, ResultTitle, ResultIntro, CreditDate, CreditAmount,
	CreditFrom, CreditReference, CreditOutcome, CaptureButton, UnmatchedTitle, UnmatchedEmpty, AlreadyImported, ReturnsBefore,
	OtherAccounts, BackToPayments string
	// Unmatched credits kept by imports, and their resolution
	CreditsTitle, CreditsIntro, CreditsEmpty, CreditsResolvedTitle, CreditReason, CreditState, CreditStateUnmatched,
	CreditStateAssigned, CreditStateReturned, CreditStateIgnored, CreditResolve, CreditAssign, CreditReturn, CreditIgnore,
	CreditPayment, CreditPaymentHint, CreditNote, CreditResolveButton, CreditResolveQuestion, CreditAssignDetail,
	CreditCloseDetail, CreditNoChoice, CreditNoPayment, CreditNoNote, CreditAssigned, CreditAssignedProblem, CreditClosed,
	CreditAlready, CreditBy, OvCredits, OvBooks, LineKept, KeepButton string
	// Person search on the invitations page
	PersonsSearch, PersonsSearchButton, PersonsNoMatch string
	// Outcomes of a statement line
	OutcomeExact, OutcomeByAmount, OutcomePartial, OutcomeExcess, OutcomeCurrency, OutcomeDuplicate, OutcomeUnknown,
	OutcomeSecond, LineCompleted, LineCaptured, LineFailed, LineWillComplete, LineWillRecord, LineWillPart, LinePart, LineOwed, LineWillOwe string
	// Returned direct debits of a statement
	OutcomeReturned, OutcomeReturnUnknown, OutcomeReturnProblem, LineReturned, LineWillReturn, LineReturnFee, LineMandateEnded string
	// Invitations (person import)
	InvitationsTitle, ImportIntro, ImportFile, ImportPreviewButton, ImportMissing, ImportEmpty, ImportTooLarge, ImportPreviewTitle,
	ImportPreviewIntro, ImportApply, ImportDoneTitle, ImportErrorsIntro, ImportLine, ImportExternalID, ImportOutcome,
	ImportProblems, ImportCreated, ImportUpdated, ImportUnchanged, ImportErrors, PersonsTitle, PersonsEmpty,
	PersonName, PersonBorn, PersonKeys string
	// Invitations (sending, list, revoke)
	InvPeriod, InvShow, InvSendTitle, InvSendIntro, InvWhom, InvWhomAll, InvWhomChosen, InvExternalIDs, InvExternalIDsHint,
	InvDays, InvDaysHint, InvMail, InvSendButton, InvClosed, InvErrors, InvWhomMissing, InvDaysInvalid, InvSentTitle, InvInvited,
	InvSkipped, InvListTitle, InvEmpty, InvUserKey, InvPersons, InvState, InvCreated, InvExpires, InvRevoke, InvRevokeQuestion,
	InvRevokeDetail, InvRevoked, InvStateInvited, InvStateSent, InvStateOpened, InvStateRegistered, InvStatePaid, InvStateExpired,
	InvStateRevoked string
	// Setup
	NavSetup, SetupTitle, SetupSections, SetupOrganisation, SetupPeriods, SetupTypes, SetupPrices, SetupStaff, Save, Change,
	OrgName, OrgContact, OrgLogo, OrgColour, OrgTimeZone, OrgLanguage, OrgHashSecret, OrgHashSecretNew, SecretSet, SecretNotSet, OrgSaved,
	OrgSecretShort, OrgSecretNoKey, PeriodName, PeriodDates, PeriodDefinition, PeriodStatus, PeriodChange, PeriodOpen,
	PeriodClose, PeriodOpened, PeriodClosed, PeriodCloseQuestion, PeriodCloseDetail, TypeName, TypeCode, TypeAges, TypeAnyAge,
	RulesEmpty, RuleLabel, RuleAppliesTo, RuleAmount, RuleValid, RuleAlways, RuleEveryone, RuleFromPersons,
	// What a price rule does, by kind (engine.PriceRuleKind).
	RuleKindMembershipFee, RuleKindMemberType, RuleKindEarlyBird, RuleKindLateFee, RuleKindFamily, RuleKindAdminFee,
	CalcTitle, CalcIntro, CalcPeriod, CalcOn, CalcPersons, CalcType, CalcMember, CalcNoPerson, CalcButton, CalcTotal,
	MemberNew, MemberRenewal, MemberTransfer, StaffWho, StaffLastSignIn, StaffRole, StaffDisable, StaffDisabled, StaffAdd,
	StaffEmail, StaffName, StaffAdded, StaffRoleChanged, StaffDisabledDone, StaffDisableQuestion, StaffDisableDetail, Never string
	// Stored states as staff read them (statusLabel): periods, memberships,
	// orders and payment attempts; age groups (AgeUnder, AgeFrom: %d the age).
	StatusOpen, StatusClosed, StatusPendingPayment, StatusActive, StatusCancelled, StatusUnpaid, StatusPaid,
	StatusPending, StatusSucceeded, StatusFailed, AgeUnder, AgeFrom string
	// Process definitions
	NavDefinitions, DefTitle, DefName, DefVersion, DefCreated, DefActivate, DefInUse, DefRequired, DefUpload, DefUploadIntro,
	DefFile, DefUploadButton, DefMissing, DefTooLarge, DefImported, DefUnchanged, DefActivated, DefActivateQuestion,
	DefActivateDetail, DefStepsOf, DefAges, DefPattern, DefRange string
}

// staffOpsTexts are the operations pages' texts in every language: the group staff_ops of
// views/lang/locales/staff.<code>.json.
var staffOpsTexts = lang.LoadTexts[OpsTexts]("staff_ops")

// OpsText holds them in English.
var OpsText = staffOpsTexts.For("en")

// OpsTextIn is the operations pages' texts in the language of ctx.
func OpsTextIn(ctx context.Context) *OpsTexts { return staffOpsTexts.In(ctx) }
