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
	// Yes and No say what the two buttons do ("Cancel registration",
	// "Keep registration"); "" for the general "Yes, do it" and "Cancel".
	Yes, No string
}

// StaffHiddenField is one field a confirmation carries along.
type StaffHiddenField struct{ Name, Value string }

// StaffAuditModel is the audit log page, or the audit part of a detail.
type StaffAuditModel struct {
	StaffChrome
	// Action is the filter form's address; the filters as given.
	Action                 string
	Actors, Actions, Kinds []StaffOption
	RecordID, From, Until  string
	Filtered               bool
	Rows                   []StaffAuditRow
	// OlderURL pages on, "" at the end; NewestURL back to the first
	// page, "" on it.
	OlderURL, NewestURL string
}

// StaffAuditRow is one audit entry, ready to print: who did what to
// which record, when, and what changed.
type StaffAuditRow struct {
	// When is printed, WhenISO for <time datetime>.
	When, WhenISO string
	// Who names the actor (a staff member's name), WhoDetail their
	// e-mail address when Who is a name.
	Who, WhoDetail string
	// Action in words, ActionCode as stored (data-action).
	Action, ActionCode string
	Target, TargetURL  string
	Changes            []StaffAuditChange
}

// StaffAuditChange is one changed field: before → after; Before or
// After "" when the field was added or removed.
type StaffAuditChange struct {
	Field, Before, After string
}

// StaffOption is one choice of a filter.
type StaffOption struct {
	Value, Label string
	Selected     bool
}

// StaffRegistrationsModel is the registrations list.
type StaffRegistrationsModel struct {
	StaffChrome
	Action                   string // the filter form's address
	Search, UnpaidDays       string
	Periods, States, Types   []StaffOption
	Rows                     []StaffRegistrationRow
	Total                    int
	PrevURL, NextURL, CSVURL string // "" when there is none or the role may not
	PageText                 string
	// Sort is the list's order (a value of the sort parameter), kept by the filter form.
	Sort string
	// OwedSort and DaysSort are the sortable columns' headers.
	OwedSort, DaysSort StaffSortLink
}

// StaffRegistrationRow is one registration in the list. Owed and
// DaysUnpaid are "" unless the newest order is unpaid; LinkLabel names
// the registration for the row's link.
type StaffRegistrationRow struct {
	URL, ID, Household, UserKey, State, StateKey, Reference, Total, Started, Updated string
	Owed, DaysUnpaid, DaysText, LinkLabel                                            string
}

// StaffSortLink is the header of a sortable column: the link sorts by it;
// State is its aria-sort ("" when the list is not sorted by it), Note
// says so in words, Title what the link does.
type StaffSortLink struct{ Label, URL, State, Note, Title string }

// staffStateClass colours a state badge.
func staffStateClass(key string) string {
	switch key {
	case "paid":
		return "bg-green-100 text-green-900"
	case "awaiting_payment":
		return "bg-amber-100 text-amber-900"
	case "cancelled":
		return "bg-slate-200 text-slate-800"
	case "suspended":
		return "bg-orange-100 text-orange-900"
	}
	return "bg-sky-100 text-sky-900"
}

// StaffOverviewModel is the season overview of one period.
type StaffOverviewModel struct {
	StaffChrome
	Action  string // the period choice's address
	Periods []StaffOption
	// States are the registrations per state, each linking to the list.
	States                       []StaffCountLink
	Expected, Received, Refunded string
	Chart                        StaffChart
	Attention                    StaffCountLink
	// Jobs counts the failed and dead jobs, linking to the jobs page.
	Jobs StaffCountLink
	// Credits counts the bank credits waiting for a treasurer, linking to the payments page.
	Credits StaffCountLink
	// Books counts the violations the last nightly books check found
	// (engine/books), and Findings says each in words; none: sound.
	Books    StaffCountLink
	Findings []string
	// Members and Ages split the period's memberships per type and per age
	// group into active and awaiting payment; MembersTotal adds them up.
	Members, Ages []StaffMemberCount
	MembersTotal  StaffMemberCount
	// OpenPaymentsURL leads to who owes what (treasurers; "" for others).
	OpenPaymentsURL string
}

// StaffMemberCount is a row of the members tables.
type StaffMemberCount struct {
	Label                  string
	Active, Pending, Total int
}

// StaffCountLink is a count with a label and, optionally, where it leads.
type StaffCountLink struct {
	Label, Key, URL string
	Count           int
}

// StaffChart is the registrations and payments per day, drawn as SVG by
// the server: bars of two series over the days.
type StaffChart struct {
	Width, Height int
	Bars          []StaffChartBar
	Max           int
	FirstDay      string
	LastDay       string
	Summary       string // the chart's text alternative
	// Scale says what the height stands for ("0 to 4 a day"); MidDay is
	// the day under the middle of the axis.
	Scale, MidDay string
	// Days are the days with a registration started or a payment
	// received, for the table beside the bars.
	Days []StaffChartDay
}

// StaffChartDay is one day with activity.
type StaffChartDay struct {
	Day                     string
	Registrations, Payments int
}

// StaffChartBar is one bar: x, y, width and height in the SVG's units.
type StaffChartBar struct {
	X, Y, W, H int
	Series     string // "registrations" or "payments"
	Title      string
}
