package members

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views"
	"portal/views/lang"
	"portal/views/memberview"
)

// The texts of the flow that handlers compose into view models are the
// flow_* messages of views/lang.
const paymentCountdown = 5 // seconds before the browser goes to the payment page

// flowRequest is a page request's signed-in user and period.
type flowRequest struct {
	userKey  string
	periodID int64
}

// registrationOf resolves the period and the session of a flow page, or
// renders what the member needs instead (done=false).
func (s *Server) registrationOf(c echo.Context) (flowRequest, bool, error) {
	periodID, ok := server.PathID(c, "periodId")
	if !ok {
		return flowRequest{}, false, s.AccessDenied(c, "period")
	}
	sess, ok, err := s.BrowserSession(c)
	if !ok {
		return flowRequest{}, false, err
	}
	return flowRequest{userKey: sess.UserKey, periodID: periodID}, true, nil
}

// load returns the current form, rendering access denied for a period that
// closed or a user key that lost its link meanwhile.
func (s *Server) load(c echo.Context, r flowRequest) (*registration.Form, bool, error) {
	form, _, err := registration.Of(s.engine).LoadMembershipForm(c.Request().Context(), r.userKey, r.periodID, nil)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return nil, false, s.AccessDenied(c, "period")
		}
		return nil, false, err
	}
	return form, true, nil
}

// currentForm resolves a flow page's registration and its current form, or
// renders what the member needs instead (ok=false).
func (s *Server) currentForm(c echo.Context) (flowRequest, *registration.Form, bool, error) {
	r, ok, err := s.registrationOf(c)
	if !ok {
		return r, nil, false, err
	}
	form, ok, err := s.load(c, r)
	return r, form, ok, err
}

// stepURL is the page of a form's current step.
func stepURL(c echo.Context, f *registration.Form) string {
	switch {
	case f.State == engine.StateDone:
		return server.RegisterPath(c, f.PeriodID, "done")
	case f.Step == 0:
		return server.RegisterPath(c, f.PeriodID, "persons")
	}
	return server.RegisterPath(c, f.PeriodID, "step", strconv.Itoa(f.Step))
}

func personName(p registration.FormPerson) string { return p.FirstName + " " + p.LastName }

// personStatusKeys are the messages of the engine's person statuses.
var personStatusKeys = map[string]string{
	engine.PersonAvailable:      "person_available",
	engine.PersonRegistered:     "person_registered",
	engine.PersonPendingPayment: "person_pending_payment",
}

// personStatusText is a person's status in the request's language.
func personStatusText(l lang.Language, status string) string {
	if key, ok := personStatusKeys[status]; ok {
		return l.T(key)
	}
	return status
}

var badges = map[string]string{
	engine.PersonAvailable:      "badge-available",
	engine.PersonRegistered:     "badge-registered",
	engine.PersonPendingPayment: "badge-pending",
}

func personStatuses(l lang.Language, people []registration.FormPerson, status func(registration.FormPerson) string) []memberview.PersonStatusModel {
	out := make([]memberview.PersonStatusModel, len(people))
	for i, p := range people {
		st := status(p)
		out[i] = memberview.PersonStatusModel{Name: personName(p), Born: l.T("flow_born", map[string]any{"Date": l.Date(p.DateOfBirth)}),
			Status: personStatusText(l, st), Badge: badges[st]}
	}
	return out
}

func quoteLines(lg lang.Language, q *registration.Quote) ([]views.OrderLineModel, string) {
	lines := make([]views.OrderLineModel, len(q.Lines))
	for i, l := range q.Lines {
		lines[i] = views.OrderLineModel{Description: l.Description, Amount: lg.Money(l.AmountMinor, q.Currency)}
	}
	return lines, lg.Money(q.TotalMinor, q.Currency)
}

// reloadWithNotice shows the current state after a stale or double submission.
func (s *Server) reloadWithNotice(c echo.Context, r flowRequest) error {
	form, ok, err := s.load(c, r)
	if !ok {
		return err
	}
	return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
}

// renderCurrent renders the form's current step with a notice (status 409),
// or sends the member to it when it is not a question page.
func (s *Server) renderCurrent(c echo.Context, form *registration.Form, notice string) error {
	if form.State == engine.StateDone {
		return c.Redirect(http.StatusSeeOther, stepURL(c, form))
	}
	return server.Render(c, http.StatusConflict, memberview.Step(s.stepModel(c, form, nil, nil, notice)))
}
