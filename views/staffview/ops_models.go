package staffview

// JobsModel is the failed jobs page.
type JobsModel struct {
	Chrome
	Jobs []JobRow
	// RunURL runs a scheduled job now (administrators); "" hides the form.
	RunURL   string
	RunKinds []string
}

// JobRow is one failed or dead job, ready to print.
type JobRow struct {
	ID, Kind, State, Attempts, Recipient, Error, Due string
	PortalWide                                       bool
	// RetryURL is where its retry posts; "" when the role may not retry.
	RetryURL string
}

// PaymentsModel is the payments page: attempts needing attention and
// the statement upload.
type PaymentsModel struct {
	Chrome
	Attention []AttentionRow
	// UploadURL is where a statement is posted; "" when the role may not
	// import, or bank transfer is not set up (NoBank).
	UploadURL string
	NoBank    bool
	// Error is a problem with the uploaded file, shown by its field.
	Error string
	// Credits are the credits imports kept because they matched nothing:
	// unmatched first, then the latest resolved.
	Credits []StoredCredit
	// DebitsURL is the direct-debit collection runs' page.
	DebitsURL string
}

// StoredCredit is one kept bank credit.
type StoredCredit struct {
	// Key is the credit's id, unique on the page (form field ids).
	Key                                                     string
	Date, Amount, From, IBAN, Reference, Remittance, Reason string
	// StateKey is the state's code (data-state), State its name.
	StateKey, State string
	// Resolved says who resolved it when and why, and Payment what an
	// assigned credit paid (PaymentURL its registration).
	Resolved, Note, Payment, PaymentURL string
	// ResolveURL is where the treasurer's decision posts; "" when the
	// credit is resolved or the role may not resolve it.
	ResolveURL string
}

// AttentionRow is one payment attempt needing attention: the
// household and its registration (DetailURL), why (Reason, Detail) and
// what to do (Action).
type AttentionRow struct {
	Reason, Detail, Action, Reference, Amount, UserKey, Created string
	Household, Registration, DetailURL                          string
}

// StatementModel is a statement's proposed matches (Preview) or the
// import's result.
type StatementModel struct {
	Chrome
	Preview   bool
	Matched   []CreditRow
	Unmatched []CreditRow
	// Notes are counts of credits left out (imported before, other accounts).
	Notes []string
	// CaptureURL and Statement post the same file again to capture it.
	CaptureURL, Statement string
	BackURL               string
}

// CreditRow is one credit of a statement.
type CreditRow struct {
	Date, Amount, From, Reference, Outcome, Result string
	// Kind is "ok", "problem" or "error" for the row's data-kind.
	Kind string
}

// InvitationsModel is the invitations page: the CSV import and the
// persons list.
type InvitationsModel struct {
	Chrome
	ImportURL string
	Error     string
	Persons   []DirectoryRow
	MoreURL   string
	// PersonsURL is where the person search GETs; PersonSearch what was searched.
	PersonsURL, PersonSearch string
	// The invitations of the chosen period: the period choice (a GET to
	// PeriodURL), the send form, its result and the list with counts.
	PeriodURL   string
	Periods     []Option
	Send        InviteForm
	Sent        *InviteResult
	Counts      []CountLink
	Invitations []InvitationRow
}

// InviteForm is the form that invites households to a period.
type InviteForm struct {
	Action   string // "" when the period is not open: nothing to send
	PeriodID string
	// Whom is "all" or "chosen"; ExternalIDs the chosen persons, one a line.
	Whom, ExternalIDs, Days string
	Mail                    bool
	// Errors per field name (whom, externalIds, days), and the summary.
	Errors map[string]string
	Error  string
}

// InviteResult is what a send did.
type InviteResult struct {
	Invited int
	Skipped []InviteSkip
}

// InviteSkip is one person or user key not invited, and why.
type InviteSkip struct{ Who, Reason string }

// InvitationRow is one invitation with its state.
type InvitationRow struct {
	UserKey, Persons, State, StateKey, Created, Expires string
	RevokeURL                                           string // "" when it cannot be revoked
}

// DirectoryRow is one person of the organisation with their user keys.
type DirectoryRow struct {
	Name, ExternalID, Born, Email, UserKeys string
}

// ImportModel is an import's preview (Preview, with the form that
// applies it), its result, or its errors.
type ImportModel struct {
	Chrome
	Preview                             bool
	Created, Updated, Unchanged, Errors int
	Rows                                []ImportRow
	ApplyURL, File, FileName, BackURL   string
}

// ImportRow is one row of an import report.
type ImportRow struct {
	Line, ExternalID, Outcome, Problems string
}
