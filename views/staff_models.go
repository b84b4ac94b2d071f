package views

// StaffChrome is what every staff page frame needs.
type StaffChrome struct {
	Chrome
	// User is who is signed in, "" on the sign-in page.
	UserName, UserRole string
	// Nav is the navigation, in order; the current page is marked.
	Nav []StaffNavItem
	// Flash is a result message after an action (PRG), "" for none.
	Flash string
	// LogoutURL is where the sign-out form posts.
	LogoutURL string
	// RequestID is shown with internal errors, so staff can report them.
	RequestID string
}

// StaffNavItem is one navigation link.
type StaffNavItem struct {
	Label, Href string
	Current     bool
}

// StaffMessageModel is a staff page that only says something: an error,
// the sign-in.
type StaffMessageModel struct {
	StaffChrome
	Heading, Message string
	// Link is an optional way on.
	Link, LinkText string
	// Kind is "error" or "info", the page's data-kind.
	Kind string
}

// StaffConfirmModel asks before a destructive action: the form posts the
// same fields again with confirmed=1.
type StaffConfirmModel struct {
	StaffChrome
	Question, Detail string
	Action           string // where the form posts
	Fields           []StaffHiddenField
	CancelURL        string
}

// StaffHiddenField is one field a confirmation carries along.
type StaffHiddenField struct{ Name, Value string }

// StaffAuditModel is the audit log page, or the audit part of a detail.
type StaffAuditModel struct {
	StaffChrome
	Rows []StaffAuditRow
	// OlderURL pages on, "" at the end.
	OlderURL string
}

// StaffAuditRow is one audit entry, ready to print.
type StaffAuditRow struct {
	When, Who, Action, Target, TargetURL, Before, After string
}
