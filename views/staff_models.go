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
}

// StaffRegistrationRow is one registration in the list.
type StaffRegistrationRow struct {
	URL, ID, Household, UserKey, State, StateKey, Reference, Total, Started, Updated string
}

// StaffDetailModel is one registration.
type StaffDetailModel struct {
	StaffChrome
	ID, UserKey, State, StateKey, Period, Started, Updated, Definition string
	Household                                                          []StaffPersonRow
	Steps                                                              []StaffStepRow
	Archive                                                            string // the archive's summary, "" when not archived
	Memberships                                                        []StaffMembershipRow
	Order                                                              *StaffOrderModel
	Payments                                                           []StaffPaymentRow
	Messages                                                           []StaffMessageRow
	Audit                                                              []StaffAuditRow
	Actions                                                            StaffDetailActions
	Today                                                              string            // the capture form's default date
	Consents                                                           []StaffConsentRow // staff_privacy.templ
}

// StaffPersonRow is one person of the household.
type StaffPersonRow struct {
	Name, Born, Email string
	Selected          bool
	// DataURL is the person's data page; "" for roles that may not see it.
	DataURL string
}

// StaffStepRow is one question and its answers.
type StaffStepRow struct {
	Question string
	Answers  []string // "Name: answer", or the answer alone
}

// StaffMembershipRow is one membership of the registration.
type StaffMembershipRow struct{ Person, Type, Kind, Status string }

// StaffOrderModel is the registration's order.
type StaffOrderModel struct {
	Reference, Status, Total, Created, Paid string
	// TransferReference is the RF creditor reference members write on
	// their bank transfer ("" when the order is not paid by transfer).
	TransferReference string
	Lines             []OrderLineModel
}

// StaffPaymentRow is one payment attempt with its provider events.
type StaffPaymentRow struct {
	Reference, Provider, Status, Amount, Created, Problem, Refund string
	Events                                                        []string
	// RefundURL is where the refund posts; "" when it cannot be refunded
	// or the role may not.
	RefundURL string
}

// StaffMessageRow is one message about the registration.
type StaffMessageRow struct{ Kind, Recipient, Created, Sent, Delivery, Error string }

// StaffDetailActions are the actions the role may take now; "" hides one.
type StaffDetailActions struct {
	ResendConfirmation, ResendPaymentLink, Capture, Cancel, Reset string
	CaptureCurrency                                               string
	// CaptureAmount pre-fills the capture form with what is still owed
	// (a plain amount, "184.50"); CaptureOwed says what arrived and what
	// is owed when part arrived already.
	CaptureAmount, CaptureOwed string
}

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
	ByType, ByAge                []StaffCountLink
	Expected, Received, Refunded string
	Chart                        StaffChart
	Attention                    StaffCountLink
	// Jobs counts the failed and dead jobs, linking to the jobs page.
	Jobs StaffCountLink
	// Credits counts the bank credits waiting for a treasurer, linking to the payments page.
	Credits StaffCountLink
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
}

// StaffChartBar is one bar: x, y, width and height in the SVG's units.
type StaffChartBar struct {
	X, Y, W, H int
	Series     string // "registrations" or "payments"
	Title      string
}
