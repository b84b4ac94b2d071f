package views

// StaffOpsTexts are the texts of the staff pages for payments, jobs and
// invitations (the operations side), kept apart from StaffTexts so that
// each page's texts are found with its page.
type StaffOpsTexts struct {
	NavPayments, NavJobs, NavInvitations string
	// Jobs
	JobsTitle, JobsIntro, JobsEmpty, JobID, JobKind, JobState, JobAttempts, JobRecipient, JobError, JobDue,
	JobRetry, JobPortalWide, JobRetried string
	// Payments
	PaymentsTitle, AttentionTitle, AttentionIntro, AttentionEmpty, AttentionReason, AttentionAmount, AttentionUser,
	AttentionCreated, AttentionProblem, AttentionSecond, AttentionPending string
	StatementTitle, StatementIntro, StatementFile, StatementUpload, StatementNoBank, StatementMissing, StatementTooLarge,
	StatementInvalid, PreviewTitle, PreviewIntro, PreviewNothing, ResultTitle, ResultIntro, CreditDate, CreditAmount,
	CreditFrom, CreditReference, CreditOutcome, CaptureButton, UnmatchedTitle, UnmatchedEmpty, AlreadyImported,
	OtherAccounts, BackToPayments string
	// Outcomes of a statement line
	OutcomeExact, OutcomeByAmount, OutcomePartial, OutcomeExcess, OutcomeCurrency, OutcomeDuplicate, OutcomeUnknown,
	LineCompleted, LineCaptured, LineFailed, LineWillComplete, LineWillRecord string
	// Invitations (person import)
	InvitationsTitle, ImportIntro, ImportFile, ImportPreviewButton, ImportMissing, ImportEmpty, ImportTooLarge, ImportPreviewTitle,
	ImportPreviewIntro, ImportApply, ImportDoneTitle, ImportErrorsIntro, ImportLine, ImportExternalID, ImportOutcome,
	ImportProblems, ImportCreated, ImportUpdated, ImportUnchanged, ImportErrors, PersonsTitle, PersonsEmpty,
	PersonName, PersonBorn, PersonKeys string
}

// StaffOpsText holds those texts in English.
var StaffOpsText = StaffOpsTexts{
	NavPayments:    "Payments",
	NavJobs:        "Jobs",
	NavInvitations: "Invitations",

	JobsTitle:     "Failed jobs",
	JobsIntro:     "Messages and tasks that failed. A failed job is tried again by itself; a dead one has run out of attempts and waits for you. Retry once the cause is fixed.",
	JobsEmpty:     "No failed jobs. Everything was delivered.",
	JobID:         "Job",
	JobKind:       "Kind",
	JobState:      "State",
	JobAttempts:   "Attempts",
	JobRecipient:  "Recipient",
	JobError:      "Last error",
	JobDue:        "Next try",
	JobRetry:      "Retry now",
	JobPortalWide: "portal-wide",
	JobRetried:    "The job was queued again with a fresh set of attempts.",

	PaymentsTitle:    "Payments",
	AttentionTitle:   "Payments needing attention",
	AttentionIntro:   "Amounts that did not match, second payments to give back, and payments pending for more than 14 days.",
	AttentionEmpty:   "No payment needs attention.",
	AttentionReason:  "Why",
	AttentionAmount:  "Amount",
	AttentionUser:    "User key",
	AttentionCreated: "Started",
	AttentionProblem: "Amount mismatch",
	AttentionSecond:  "Second payment: give back",
	AttentionPending: "Pending too long",

	StatementTitle:    "Import a bank statement",
	StatementIntro:    "Upload the camt.053 statement or camt.054 notification your bank gives you. You will see the proposed matches before anything is captured.",
	StatementFile:     "Statement file (camt.053 or camt.054, XML)",
	StatementUpload:   "Show the proposed matches",
	StatementNoBank:   "Bank transfer is not set up for this organisation, so there is no account to import for.",
	StatementMissing:  "Choose a camt.053 or camt.054 file to upload.",
	StatementTooLarge: "The file is too large: a statement may be at most 4 MB.",
	StatementInvalid:  "This file is not a camt.053 or camt.054 statement the portal can read",
	PreviewTitle:      "Proposed matches",
	PreviewIntro:      "Nothing has been captured yet. Check the matches, then capture them: exact matches complete their registration, the others are recorded on the payment for you to settle.",
	PreviewNothing:    "No credit of this statement can be matched to an open payment.",
	ResultTitle:       "Statement imported",
	ResultIntro:       "What became of each credit to the account.",
	CreditDate:        "Booked",
	CreditAmount:      "Amount",
	CreditFrom:        "From",
	CreditReference:   "Reference",
	CreditOutcome:     "Match",
	CaptureButton:     "Capture the matched credits",
	UnmatchedTitle:    "Unmatched credits",
	UnmatchedEmpty:    "Every credit matched an open payment.",
	AlreadyImported:   "credits were imported before and are left out.",
	OtherAccounts:     "credits to other accounts are left out.",
	BackToPayments:    "Back to payments",

	OutcomeExact:     "Reference and amount match",
	OutcomeByAmount:  "Matched by amount only",
	OutcomePartial:   "Less than expected",
	OutcomeExcess:    "More than expected",
	OutcomeCurrency:  "Another currency",
	OutcomeDuplicate: "Listed twice",
	OutcomeUnknown:   "No open payment",
	LineCompleted:    "Captured; registration completed",
	LineCaptured:     "Captured; recorded as a problem on the payment",
	LineFailed:       "Could not be captured",
	LineWillComplete: "Will complete the registration",
	LineWillRecord:   "Will be recorded as a problem",

	InvitationsTitle:    "Invitations",
	ImportIntro:         "Import the persons of your club and the user keys that may register them, from a CSV file with the columns externalId, firstName, lastName, dateOfBirth (YYYY-MM-DD), email and userKeys (separated by ;). You see the changes before they are applied; the same file can be imported again.",
	ImportFile:          "CSV file",
	ImportPreviewButton: "Preview the changes",
	ImportMissing:       "Choose a CSV file to upload.",
	ImportEmpty:         "The file holds no persons: after the header line, one person per line.",
	ImportTooLarge:      "The file is too large: an import may be at most 4 MB.",
	ImportPreviewTitle:  "Changes to apply",
	ImportPreviewIntro:  "Nothing has been changed yet.",
	ImportApply:         "Apply these changes",
	ImportDoneTitle:     "Import applied",
	ImportErrorsIntro:   "Nothing can be imported until these rows are corrected:",
	ImportLine:          "Line",
	ImportExternalID:    "External id",
	ImportOutcome:       "Change",
	ImportProblems:      "Problems",
	ImportCreated:       "new",
	ImportUpdated:       "changed",
	ImportUnchanged:     "unchanged",
	ImportErrors:        "with errors",
	PersonsTitle:        "Persons",
	PersonsEmpty:        "No persons imported yet.",
	PersonName:          "Name",
	PersonBorn:          "Born",
	PersonKeys:          "User keys",
}
