package handlers

import (
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/views"
)

// staffTextIn is the staff pages' texts (views/staff_texts.go) in the
// request's language.
func staffTextIn(c echo.Context) *views.StaffTexts { return views.StaffTextIn(c.Request().Context()) }

// staffOpsTextIn is the operations pages' texts (views/staff_ops_texts.go)
// in the request's language.
func staffOpsTextIn(c echo.Context) *views.StaffOpsTexts {
	return views.StaffOpsTextIn(c.Request().Context())
}

// staffFlash is a result message, chosen in the request's language.
type staffFlash func(c echo.Context) string

// staffNavItem is one entry of the staff navigation, shown to roles from Min.
type staffNavItem struct {
	Label staffFlash
	Path  string // below StaffPrefix
	Min   staff.StaffRole
}

// staffNav is the navigation, in order. Add an entry per page.
var staffNav = []staffNavItem{
	{Label: func(c echo.Context) string { return staffTextIn(c).NavOverview }, Path: "", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffTextIn(c).NavRegistrations }, Path: "/registrations", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffOpsTextIn(c).NavPayments }, Path: "/payments", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffDebitTextIn(c).NavDebits }, Path: staffDebitsPath, Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffOpenPaymentTextIn(c).NavOpenPayments }, Path: openPaymentsPath, Min: staff.RoleTreasurer},
	{Label: func(c echo.Context) string { return staffYearReportTextIn(c).NavYearReport }, Path: yearReportPath, Min: staff.RoleTreasurer},
	{Label: func(c echo.Context) string { return staffOpsTextIn(c).NavInvitations }, Path: "/invitations", Min: staff.RoleRegistrar},
	{Label: func(c echo.Context) string { return staffOpsTextIn(c).NavJobs }, Path: "/jobs", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffOpsTextIn(c).NavSetup }, Path: staffSetupPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return staffOpsTextIn(c).NavDefinitions }, Path: staffDefinitionsPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return views.StaffWebhookTextIn(c.Request().Context()).NavWebhooks }, Path: staffWebhooksPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return views.PersonalDataTextIn(c.Request().Context()).NavRequests }, Path: staffDataRequestsPath, Min: staff.RoleRegistrar},
	{Label: func(c echo.Context) string { return staffTextIn(c).NavAudit }, Path: "/audit", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return views.StaffPrivacyTextIn(c.Request().Context()).NavAccessLog }, Path: staffAccessLogPath, Min: staff.RoleAdmin},
}

// staffFlashes are the result messages an action may name in ?done=: the
// message is chosen from this list, never taken from the address.
var staffFlashes = map[string]staffFlash{
	"resent-confirmation": func(c echo.Context) string { return staffTextIn(c).DoneResentConfirmation },
	"resent-link":         func(c echo.Context) string { return staffTextIn(c).DoneResentLink },
	"reset":               func(c echo.Context) string { return staffTextIn(c).DoneReset },
	"cancelled":           func(c echo.Context) string { return staffTextIn(c).DoneCancelled },
	"captured":            func(c echo.Context) string { return staffTextIn(c).DoneCaptured },
	"captured-problem":    func(c echo.Context) string { return staffTextIn(c).DoneCapturedProblem },
	"captured-partial":    func(c echo.Context) string { return staffTextIn(c).DoneCapturedPartial },
	"captured-second":     func(c echo.Context) string { return staffTextIn(c).DoneCapturedSecond },
	"refunded":            func(c echo.Context) string { return staffTextIn(c).DoneRefunded },
}

// staffChrome is the frame of a staff page titled title, with the
// navigation the signed-in member's role sees.
func (s *Server) staffChrome(c echo.Context, title string) views.StaffChrome {
	ch := views.StaffChrome{Chrome: s.chrome(title), LogoutURL: organisationPath(c, StaffLogoutPath)}
	u := staffUserOf(c)
	if u == nil {
		return ch
	}
	ch.UserName, ch.UserRole = u.Name, staffRoleLabel(c, u.Role)
	path := c.Path()
	for _, n := range staffNav {
		if u.Role.AtLeast(n.Min) {
			ch.Nav = append(ch.Nav, views.StaffNavItem{Label: n.Label(c), Href: organisationPath(c, StaffPrefix+n.Path),
				Current: path == StaffPrefix+n.Path || (n.Path != "" && len(path) > len(StaffPrefix+n.Path) && path[:len(StaffPrefix+n.Path)+1] == StaffPrefix+n.Path+"/")})
		}
	}
	if flash, ok := staffFlashes[c.QueryParam("done")]; ok {
		ch.Flash = flash(c)
	}
	return ch
}

// staffRoleLabel is how a role is shown.
func staffRoleLabel(c echo.Context, r staff.StaffRole) string {
	switch r {
	case staff.RoleViewer:
		return staffTextIn(c).RoleViewer
	case staff.RoleRegistrar:
		return staffTextIn(c).RoleRegistrar
	case staff.RoleTreasurer:
		return staffTextIn(c).RoleTreasurer
	case staff.RoleAdmin:
		return staffTextIn(c).RoleAdmin
	}
	return string(r)
}

// staffRender renders a staff page; pages carry personal data and are never cached.
func staffRender(c echo.Context, status int, component templ.Component) error {
	return render(c, status, component)
}

// staffErrorPage tells a staff member what went wrong, in the staff frame.
func (s *Server) staffErrorPage(c echo.Context, status int, message string) error {
	m := views.StaffMessageModel{StaffChrome: s.staffChrome(c, staffTextIn(c).ErrorTitle), Message: message, Kind: "error"}
	if staffUserOf(c) != nil {
		m.Link, m.LinkText = organisationPath(c, StaffPrefix), staffTextIn(c).BackToOverview
	}
	if status >= 500 {
		m.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
	}
	return staffRender(c, status, views.StaffMessagePage(m))
}

// staffEngineError answers an engine error of a staff action: its code
// picks the status, its message (meant for users) is shown; internal
// failures are logged and shown as such, without their text.
func (s *Server) staffEngineError(c echo.Context, err error) error {
	e, ok := engine.AsError(err)
	if !ok {
		return err // the one error handler logs it and answers 500
	}
	switch e.Code {
	case engine.CodeNotFound:
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	case engine.CodeValidation, engine.CodeInvalid:
		return s.staffErrorPage(c, http.StatusUnprocessableEntity, e.Message+fieldSummary(e))
	case engine.CodeConflict:
		return s.staffErrorPage(c, http.StatusConflict, e.Message)
	case engine.CodeUnavailable:
		c.Response().Header().Set("Retry-After", retryAfterSeconds)
		return s.staffErrorPage(c, http.StatusServiceUnavailable, staffTextIn(c).Unavailable)
	case engine.CodeUnauthorized:
		return s.staffErrorPage(c, http.StatusForbidden, e.Message)
	}
	return err
}

// fieldSummary lists an engine error's field problems after its message.
func fieldSummary(e *engine.Error) string {
	out := ""
	for _, f := range e.Fields {
		out += " " + f.Field + ": " + f.Message + "."
	}
	return out
}

// staffConfirmed reports whether a destructive POST was confirmed; when
// not, it renders the confirmation page, which posts the same fields
// again with confirmed=1, and the caller returns its error.
func (s *Server) staffConfirmed(c echo.Context, question, detail, cancelURL string) (bool, error) {
	return s.staffAsked(c, staffQuestion{Question: question, Detail: detail}, cancelURL)
}

// staffQuestion is what a confirmation page asks, and what its two
// buttons say they do ("" for "Yes, do it" and "Cancel").
type staffQuestion struct{ Question, Detail, Yes, No string }

// staffAsked is staffConfirmed with buttons that say what they do.
func (s *Server) staffAsked(c echo.Context, q staffQuestion, cancelURL string) (bool, error) {
	if c.FormValue("confirmed") == "1" {
		return true, nil
	}
	form, err := c.FormParams()
	if err != nil {
		return false, s.staffErrorPage(c, http.StatusBadRequest, staffTextIn(c).Invalid)
	}
	m := views.StaffConfirmModel{StaffChrome: s.staffChrome(c, staffTextIn(c).ConfirmTitle), Question: q.Question, Detail: q.Detail,
		Action: organisationPath(c, c.Request().URL.Path), CancelURL: cancelURL, Yes: q.Yes, No: q.No}
	for name, vals := range form {
		for _, v := range vals {
			if name != "confirmed" {
				m.Fields = append(m.Fields, views.StaffHiddenField{Name: name, Value: v})
			}
		}
	}
	return false, staffRender(c, http.StatusOK, views.StaffConfirmPage(m))
}

// staffConfirmedID reads the record id of the path and asks first
// (staffConfirmed): proceed is true once both are settled; otherwise
// the caller returns err (a not-found page, or the question).
func (s *Server) staffConfirmedID(c echo.Context, question, detail, cancelURL string) (id int64, proceed bool, err error) {
	id, ok := pathID(c, "id")
	if !ok {
		return 0, false, s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	if ok, err := s.staffConfirmed(c, question, detail, cancelURL); !ok {
		return 0, false, err
	}
	return id, true, nil
}

// staffLoginPage answers GET /staff/login: a page with the sign-in
// button, or a note after signing out. A signed-in staff member goes on.
func (s *Server) staffLoginPage(c echo.Context) error {
	if organisationOfRequest(c) == nil {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NoOrganisation)
	}
	rd := c.QueryParam("rd")
	m := views.StaffMessageModel{StaffChrome: s.staffChrome(c, staffTextIn(c).SignInTitle), Message: staffTextIn(c).SignInIntro, Kind: "info"}
	if c.QueryParam("signed_out") != "" {
		m.Heading = staffTextIn(c).SignedOut
	}
	if s.staff.Provider == nil {
		m.Message, m.Kind = staffTextIn(c).SignInOff, "error"
		return staffRender(c, http.StatusServiceUnavailable, views.StaffMessagePage(m))
	}
	start := StaffLoginPath + "/start"
	if rd != "" {
		start += "?rd=" + url.QueryEscape(rd)
	}
	m.Link, m.LinkText = organisationPath(c, start), staffTextIn(c).SignInButton
	return staffRender(c, http.StatusOK, views.StaffMessagePage(m))
}
