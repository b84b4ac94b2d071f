package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/views"
)

// resetPage answers GET /membership/register/:periodId/reset: "start again?".
func (s *Server) resetPage(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	return render(c, http.StatusOK, views.ResetConfirm(views.ResetModel{Chrome: s.chrome(tr(c, "title_reset")),
		Action: registerPath(c, r.periodID, "reset"), CancelURL: registerPath(c, r.periodID), Committed: form.State == engine.StateDone}))
}

// resetRegistration answers POST /membership/register/:periodId/reset.
func (s *Server) resetRegistration(c echo.Context) error {
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
