package staffview

import (
	"portal/views"
)

// Chrome is what every staff page frame needs.
type Chrome struct {
	views.Chrome
	// User is who is signed in, "" on the sign-in page.
	UserName, UserRole string
	// Nav is the navigation, in order; the current page is marked.
	Nav []NavItem
	// Flash is a result message after an action (PRG), "" for none.
	Flash string
	// LogoutURL is where the sign-out form posts.
	LogoutURL string
	// RequestID is shown with internal errors, so staff can report them.
	RequestID string
}

// NavItem is one navigation link.
type NavItem struct {
	Label, Href string
	Current     bool
}

// MessageModel is a staff page that only says something: an error,
// the sign-in.
type MessageModel struct {
	Chrome
	Heading, Message string
	// Link is an optional way on.
	Link, LinkText string
	// Kind is "error" or "info", the page's data-kind.
	Kind string
}

// ConfirmModel asks before a destructive action: the form posts the
// same fields again with confirmed=1.
type ConfirmModel struct {
	Chrome
	Question, Detail string
	Action           string // where the form posts
	Fields           []HiddenField
	CancelURL        string
	// Yes and No say what the two buttons do ("Cancel registration",
	// "Keep registration"); "" for the general "Yes, do it" and "Cancel".
	Yes, No string
}

// HiddenField is one field a confirmation carries along.
type HiddenField struct{ Name, Value string }

// AuditModel is the audit log page, or the audit part of a detail.
type AuditModel struct {
	Chrome
	// Action is the filter form's address; the filters as given.
	Action                 string
	Actors, Actions, Kinds []Option
	RecordID, From, Until  string
	Filtered               bool
	Rows                   []AuditRow
	// OlderURL pages on, "" at the end; NewestURL back to the first
	// page, "" on it.
	OlderURL, NewestURL string
}

// AuditRow is one audit entry, ready to print: who did what to
// which record, when, and what changed.
type AuditRow struct {
	// When is printed, WhenISO for <time datetime>.
	When, WhenISO string
	// Who names the actor (a staff member's name), WhoDetail their
	// e-mail address when Who is a name.
	Who, WhoDetail string
	// Action in words, ActionCode as stored (data-action).
	Action, ActionCode string
	Target, TargetURL  string
	Changes            []AuditChange
}

// AuditChange is one changed field: before → after; Before or
// After "" when the field was added or removed.
type AuditChange struct {
	Field, Before, After string
}

// Option is one choice of a filter.
type Option struct {
	Value, Label string
	Selected     bool
}

// RegistrationsModel is the registrations list.
type RegistrationsModel struct {
	Chrome
	Action                   string // the filter form's address
	Search, UnpaidDays       string
	Periods, States, Types   []Option
	Rows                     []RegistrationRow
	Total                    int
	PrevURL, NextURL, CSVURL string // "" when there is none or the role may not
	PageText                 string
	// Sort is the list's order (a value of the sort parameter), kept by the filter form.
	Sort string
	// OwedSort and DaysSort are the sortable columns' headers.
	OwedSort, DaysSort SortLink
}

// RegistrationRow is one registration in the list. Owed and
// DaysUnpaid are "" unless the newest order is unpaid; LinkLabel names
// the registration for the row's link.
type RegistrationRow struct {
	URL, ID, Household, UserKey, State, StateKey, Reference, Total, Started, Updated string
	Owed, DaysUnpaid, DaysText, LinkLabel                                            string
}

// SortLink is the header of a sortable column: the link sorts by it;
// State is its aria-sort ("" when the list is not sorted by it), Note
// says so in words, Title what the link does.
type SortLink struct{ Label, URL, State, Note, Title string }

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

// OverviewModel is the season overview of one period.
type OverviewModel struct {
	Chrome
	Action  string // the period choice's address
	Periods []Option
	// States are the registrations per state, each linking to the list.
	States                       []CountLink
	Expected, Received, Refunded string
	Chart                        Chart
	Attention                    CountLink
	// Jobs counts the failed and dead jobs, linking to the jobs page.
	Jobs CountLink
	// Credits counts the bank credits waiting for a treasurer, linking to the payments page.
	Credits CountLink
	// Books counts the violations the last nightly books check found
	// (engine/books), and Findings says each in words; none: sound.
	Books    CountLink
	Findings []string
	// Members and Ages split the period's memberships per type and per age
	// group into active and awaiting payment; MembersTotal adds them up.
	Members, Ages []MemberCount
	MembersTotal  MemberCount
	// OpenPaymentsURL leads to who owes what (treasurers; "" for others).
	OpenPaymentsURL string
}

// MemberCount is a row of the members tables.
type MemberCount struct {
	Label                  string
	Active, Pending, Total int
}

// CountLink is a count with a label and, optionally, where it leads.
type CountLink struct {
	Label, Key, URL string
	Count           int
}

// Chart is the registrations and payments per day, drawn as SVG by
// the server: bars of two series over the days.
type Chart struct {
	Width, Height int
	Bars          []ChartBar
	Max           int
	FirstDay      string
	LastDay       string
	Summary       string // the chart's text alternative
	// Scale says what the height stands for ("0 to 4 a day"); MidDay is
	// the day under the middle of the axis.
	Scale, MidDay string
	// Days are the days with a registration started or a payment
	// received, for the table beside the bars.
	Days []ChartDay
}

// ChartDay is one day with activity.
type ChartDay struct {
	Day                     string
	Registrations, Payments int
}

// ChartBar is one bar: x, y, width and height in the SVG's units.
type ChartBar struct {
	X, Y, W, H int
	Series     string // "registrations" or "payments"
	Title      string
}
