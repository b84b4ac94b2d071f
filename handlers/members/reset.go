package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/views/memberview"
)

// ResetPage answers GET /membership/register/:periodId/reset: "start again?".
func (s *Server) ResetPage(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	return server.Render(c, http.StatusOK, memberview.ResetConfirm(memberview.ResetModel{Chrome: s.Chrome(server.Tr(c, "title_reset")),
		Action: server.RegisterPath(c, r.periodID, "reset"), CancelURL: server.RegisterPath(c, r.periodID), Committed: form.State == engine.StateDone}))
}

// ResetRegistration answers POST /membership/register/:periodId/reset.
func (s *Server) ResetRegistration(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	next, err := registration.Of(s.engine).Reset(c.Request().Context(), r.userKey, form.ProcessIDString())
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.reloadWithNotice(c, r)
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(c, next))
}
