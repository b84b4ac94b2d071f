package staffview

// DebitRunsModel is the list of a club's collection runs and the
// form that prepares the next one.
type DebitRunsModel struct {
	Chrome
	// PrepareURL is where the form posts; "" when the role may not
	// prepare a run or the club does not collect by direct debit
	// (NoCreditor says which).
	PrepareURL string
	NoCreditor bool
	// Until is the form's date (YYYY-MM-DD).
	Until string
	// Notice says that nothing was due by the date asked, or that none of
	// the due debits could go into a file; "" otherwise.
	Notice string
	// AttentionURL is the payments page, linked from a notice that debits
	// were left out; "" otherwise.
	AttentionURL string
	Runs         []DebitRunRow
}

// DebitRunRow is one collection run as the list shows it.
type DebitRunRow struct {
	ID, URL, MessageID, Created, CreatedBy, Until, Count, Total, Version string
	// StatusKey is the run's status code, Status it in words, StatusAt
	// when it was sent or cancelled ("" while prepared).
	StatusKey, Status, StatusAt string
}

// DebitRunModel is one collection run with its debits and what the
// treasurer may do with it.
type DebitRunModel struct {
	Chrome
	Run    DebitRunRow
	Intro  string
	Debits []DebitLine
	// LeftOut are the due debits the run could not put into its file.
	LeftOut []DebitLeftOut
	// FileURL downloads the run's file; "" when the role may not.
	FileURL string
	// SentURL and CancelURL are the actions of a prepared run; "" when
	// the run is not prepared or the role may not change it.
	SentURL, CancelURL string
	BackURL            string
}

// DebitLine is one debit of a run.
type DebitLine struct {
	EndToEndID, RegistrationID, RegistrationURL, MandateReference, Holder, IBAN, Amount, Due, Sequence string
	StatusKey, Status, ReturnCode                                                                      string
	Amended                                                                                            bool
	// MandateEnded: the mandate ended after the run was prepared (shown
	// while the run is prepared: cancel it and prepare it again).
	MandateEnded bool
}

// DebitLeftOut is a due debit a run left out of its file, with why.
type DebitLeftOut struct {
	RegistrationID, RegistrationURL, OrderReference, MandateReference, Holder, IBAN, Amount, Reason string
}
