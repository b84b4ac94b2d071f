package members

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
)

// ResumeRegistration answers POST /membership/register/:periodId/resume:
// continue where the member left off.
func (s *Server) ResumeRegistration(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	next, err := registration.Of(s.engine).Resume(c.Request().Context(), r.userKey, form.ProcessIDString())
	if err != nil {
		return err
	}
	if next.State != engine.StateDone && next.Step == next.TotalSteps {
		if rv, err := registration.Of(s.engine).Review(c.Request().Context(), r.userKey, next.ProcessIDString()); err == nil && rv.Complete {
			return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, r.periodID, "review"))
		}
	}
	return c.Redirect(http.StatusSeeOther, stepURL(c, next))
}
