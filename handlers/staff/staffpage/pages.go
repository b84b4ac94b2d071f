package staffpage

import (
	"net/http"
	"net/url"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/views"
	"portal/views/staffview"
)

// StaffTextIn is the staff pages' texts (views/staffview/texts.go) in the
// request's language.
func StaffTextIn(c echo.Context) *staffview.Texts { return staffview.TextIn(c.Request().Context()) }

// StaffOpsTextIn is the operations pages' texts (views/staffview/ops_texts.go)
// in the request's language.
func StaffOpsTextIn(c echo.Context) *staffview.OpsTexts {
	return staffview.OpsTextIn(c.Request().Context())
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
	{Label: func(c echo.Context) string { return StaffTextIn(c).NavOverview }, Path: "", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return StaffTextIn(c).NavRegistrations }, Path: "/registrations", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return StaffOpsTextIn(c).NavPayments }, Path: "/payments", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return StaffDebitTextIn(c).NavDebits }, Path: server.StaffDebitsPath, Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return StaffOpenPaymentTextIn(c).NavOpenPayments }, Path: server.OpenPaymentsPath, Min: staff.RoleTreasurer},
	{Label: func(c echo.Context) string { return StaffYearReportTextIn(c).NavYearReport }, Path: server.YearReportPath, Min: staff.RoleTreasurer},
	{Label: func(c echo.Context) string { return StaffOpsTextIn(c).NavInvitations }, Path: "/invitations", Min: staff.RoleRegistrar},
	{Label: func(c echo.Context) string { return StaffOpsTextIn(c).NavJobs }, Path: "/jobs", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return StaffOpsTextIn(c).NavSetup }, Path: server.StaffSetupPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return StaffOpsTextIn(c).NavDefinitions }, Path: server.StaffDefinitionsPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return staffview.WebhookTextIn(c.Request().Context()).NavWebhooks }, Path: server.StaffWebhooksPath, Min: staff.RoleAdmin},
	{Label: func(c echo.Context) string { return views.PersonalDataTextIn(c.Request().Context()).NavRequests }, Path: server.StaffDataRequestsPath, Min: staff.RoleRegistrar},
	{Label: func(c echo.Context) string { return StaffTextIn(c).NavAudit }, Path: "/audit", Min: staff.RoleViewer},
	{Label: func(c echo.Context) string { return staffview.PrivacyTextIn(c.Request().Context()).NavAccessLog }, Path: server.StaffAccessLogPath, Min: staff.RoleAdmin},
}

// StaffFlashes are the result messages an action may name in ?done=: the
// message is chosen from this list, never taken from the address.
var StaffFlashes = map[string]staffFlash{
	"resent-confirmation": func(c echo.Context) string { return StaffTextIn(c).DoneResentConfirmation },
	"resent-link":         func(c echo.Context) string { return StaffTextIn(c).DoneResentLink },
	"reset":               func(c echo.Context) string { return StaffTextIn(c).DoneReset },
	"cancelled":           func(c echo.Context) string { return StaffTextIn(c).DoneCancelled },
	"captured":            func(c echo.Context) string { return StaffTextIn(c).DoneCaptured },
	"captured-problem":    func(c echo.Context) string { return StaffTextIn(c).DoneCapturedProblem },
	"captured-partial":    func(c echo.Context) string { return StaffTextIn(c).DoneCapturedPartial },
	"captured-second":     func(c echo.Context) string { return StaffTextIn(c).DoneCapturedSecond },
	"refunded":            func(c echo.Context) string { return StaffTextIn(c).DoneRefunded },
}

// StaffChrome is the frame of a staff page titled title, with the
// navigation the signed-in member's role sees.
func (s *Server) StaffChrome(c echo.Context, title string) staffview.Chrome {
	rq := RequestOf(c)
	ch := staffview.Chrome{Chrome: s.Chrome(title), LogoutURL: rq.Path(server.StaffLogoutPath)}
	u := rq.User
	if u == nil {
		return ch
	}
	ch.UserName, ch.UserRole = u.Name, RoleLabel(rq.Texts, u.Role)
	path := c.Path()
	for _, n := range staffNav {
		if u.Role.AtLeast(n.Min) {
			ch.Nav = append(ch.Nav, staffview.NavItem{Label: n.Label(c), Href: rq.StaffPath(n.Path),
				Current: path == server.StaffPrefix+n.Path || (n.Path != "" && len(path) > len(server.StaffPrefix+n.Path) && path[:len(server.StaffPrefix+n.Path)+1] == server.StaffPrefix+n.Path+"/")})
		}
	}
	if flash, ok := StaffFlashes[c.QueryParam("done")]; ok {
		ch.Flash = flash(c)
	}
	return ch
}

// StaffRoleLabel is how a role is shown.
func StaffRoleLabel(c echo.Context, r staff.StaffRole) string {
	return RoleLabel(RequestOf(c).Texts, r)
}

// RoleLabel is how a role is shown in the texts t.
func RoleLabel(t *staffview.Texts, r staff.StaffRole) string {
	switch r {
	case staff.RoleViewer:
		return t.RoleViewer
	case staff.RoleRegistrar:
		return t.RoleRegistrar
	case staff.RoleTreasurer:
		return t.RoleTreasurer
	case staff.RoleAdmin:
		return t.RoleAdmin
	}
	return string(r)
}

// StaffRender renders a staff page; pages carry personal data and are never cached.
func StaffRender(c echo.Context, status int, component templ.Component) error {
	return server.Render(c, status, component)
}

// StaffErrorPage tells a staff member what went wrong, in the staff frame.
func (s *Server) StaffErrorPage(c echo.Context, status int, message string) error {
	rq := RequestOf(c)
	m := staffview.MessageModel{Chrome: s.StaffChrome(c, rq.Texts.ErrorTitle), Message: message, Kind: "error"}
	if rq.User != nil {
		m.Link, m.LinkText = rq.StaffPath(""), rq.Texts.BackToOverview
	}
	if status >= 500 {
		m.RequestID = c.Response().Header().Get(echo.HeaderXRequestID)
	}
	return StaffRender(c, status, staffview.Message(m))
}

// StaffEngineError answers an engine error of a staff action: its code
// picks the status, its message (meant for users) is shown; internal
// failures are logged and shown as such, without their text.
func (s *Server) StaffEngineError(c echo.Context, err error) error {
	e, ok := engine.AsError(err)
	if !ok {
		return err // the one error handler logs it and answers 500
	}
	switch e.Code {
	case engine.CodeNotFound:
		return s.StaffErrorPage(c, http.StatusNotFound, StaffTextIn(c).NotFound)
	case engine.CodeValidation, engine.CodeInvalid:
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, e.Message+FieldSummary(e))
	case engine.CodeConflict:
		return s.StaffErrorPage(c, http.StatusConflict, e.Message)
	case engine.CodeUnavailable:
		c.Response().Header().Set("Retry-After", server.RetryAfterSeconds)
		return s.StaffErrorPage(c, http.StatusServiceUnavailable, StaffTextIn(c).Unavailable)
	case engine.CodeUnauthorized:
		return s.StaffErrorPage(c, http.StatusForbidden, e.Message)
	}
	return err
}

// FieldSummary lists an engine error's field problems after its message.
func FieldSummary(e *engine.Error) string {
	out := ""
	for _, f := range e.Fields {
		out += " " + f.Field + ": " + f.Message + "."
	}
	return out
}

// StaffConfirmed reports whether a destructive POST was confirmed; when
// not, it renders the confirmation page, which posts the same fields
// again with confirmed=1, and the caller returns its error.
func (s *Server) StaffConfirmed(c echo.Context, question, detail, cancelURL string) (bool, error) {
	return s.StaffAsked(c, StaffQuestion{Question: question, Detail: detail}, cancelURL)
}

// StaffQuestion is what a confirmation page asks, and what its two
// buttons say they do ("" for "Yes, do it" and "Cancel").
type StaffQuestion struct{ Question, Detail, Yes, No string }

// StaffAsked is staffConfirmed with buttons that say what they do.
func (s *Server) StaffAsked(c echo.Context, q StaffQuestion, cancelURL string) (bool, error) {
	if c.FormValue("confirmed") == "1" {
		return true, nil
	}
	form, err := c.FormParams()
	if err != nil {
		return false, s.StaffErrorPage(c, http.StatusBadRequest, StaffTextIn(c).Invalid)
	}
	m := staffview.ConfirmModel{Chrome: s.StaffChrome(c, StaffTextIn(c).ConfirmTitle), Question: q.Question, Detail: q.Detail,
		Action: RequestOf(c).Path(c.Request().URL.Path), CancelURL: cancelURL, Yes: q.Yes, No: q.No}
	for name, vals := range form {
		for _, v := range vals {
			if name != "confirmed" {
				m.Fields = append(m.Fields, staffview.HiddenField{Name: name, Value: v})
			}
		}
	}
	return false, StaffRender(c, http.StatusOK, staffview.Confirm(m))
}

// StaffConfirmedID reads the record id of the path and asks first
// (staffConfirmed): proceed is true once both are settled; otherwise
// the caller returns err (a not-found page, or the question).
func (s *Server) StaffConfirmedID(c echo.Context, question, detail, cancelURL string) (id int64, proceed bool, err error) {
	id, ok := server.PathID(c, "id")
	if !ok {
		return 0, false, s.StaffErrorPage(c, http.StatusNotFound, StaffTextIn(c).NotFound)
	}
	if ok, err := s.StaffConfirmed(c, question, detail, cancelURL); !ok {
		return 0, false, err
	}
	return id, true, nil
}

// StaffLoginPage answers GET /staff/login: a page with the sign-in
// button, or a note after signing out. A signed-in staff member goes on.
func (s *Server) StaffLoginPage(c echo.Context) error {
	if server.OrganisationOfRequest(c) == nil {
		return s.StaffErrorPage(c, http.StatusNotFound, StaffTextIn(c).NoOrganisation)
	}
	rd := c.QueryParam("rd")
	m := staffview.MessageModel{Chrome: s.StaffChrome(c, StaffTextIn(c).SignInTitle), Message: StaffTextIn(c).SignInIntro, Kind: "info"}
	if c.QueryParam("signed_out") != "" {
		m.Heading = StaffTextIn(c).SignedOut
	}
	if s.Staff.Provider == nil {
		m.Message, m.Kind = StaffTextIn(c).SignInOff, "error"
		return StaffRender(c, http.StatusServiceUnavailable, staffview.Message(m))
	}
	start := server.StaffLoginPath + "/start"
	if rd != "" {
		start += "?rd=" + url.QueryEscape(rd)
	}
	m.Link, m.LinkText = RequestOf(c).Path(start), StaffTextIn(c).SignInButton
	return StaffRender(c, http.StatusOK, staffview.Message(m))
}

// StaffDebitTextIn is the collection runs' texts in the request's language.
func StaffDebitTextIn(c echo.Context) *staffview.DebitTexts {
	return staffview.DebitTextIn(c.Request().Context())
}

func StaffOpenPaymentTextIn(c echo.Context) *staffview.OpenPaymentTexts {
	return staffview.OpenPaymentTextIn(c.Request().Context())
}

func StaffYearReportTextIn(c echo.Context) *staffview.YearReportTexts {
	return staffview.YearReportTextIn(c.Request().Context())
}
