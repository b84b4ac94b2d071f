package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// overview renders GET /membership/register/:periodId for the signed-in user.
func (s *Server) overview(c echo.Context, periodID int64) error {
	sess, ok, err := s.BrowserSession(c)
	if !ok {
		return err
	}
	o, err := registration.Of(s.engine).LoadOverview(c.Request().Context(), sess.UserKey, periodID)
	if err != nil {
		if code := engine.ErrorCode(err); code == engine.CodeNotFound || code == engine.CodeConflict {
			return s.AccessDenied(c, "period")
		}
		return err
	}
	f := o.Form
	m := memberview.OverviewModel{
		Chrome: s.Chrome(o.Period.Name), Period: o.Period.Name,
		Persons:   personStatuses(server.LangOf(c), o.Persons, func(p registration.FormPerson) string { return p.Status }),
		StartURL:  server.RegisterPath(c, periodID, "persons"),
		ResumeURL: server.RegisterPath(c, periodID, "resume"),
		ResetURL:  server.RegisterPath(c, periodID, "reset"),
		DataURL:   server.OrganisationPath(c, memberDataPath),
	}
	switch f.State {
	case engine.StateRunning, engine.StateResume, engine.StateSuspended:
		m.State = memberview.OverviewInProgress
	case engine.StateDone:
		m.State, m.PayURL = memberview.OverviewCommitted, f.PaymentURL
		m.Lines, m.Total = quoteLines(server.LangOf(c), o.Order)
	default:
		m.State = memberview.OverviewNew
		selectable := false
		for _, p := range o.Persons {
			selectable = selectable || p.CanSelect
		}
		if !selectable {
			m.State = memberview.OverviewNothingToDo
		}
	}
	return server.Render(c, http.StatusOK, memberview.Overview(m))
}
