package members

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
)

// ChangeStep answers POST /membership/register/:periodId/change (field step:
// the question to change), from the check-your-answers page.
func (s *Server) ChangeStep(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	target, err := strconv.Atoi(c.FormValue("step"))
	if err != nil || target < 0 {
		return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
	}
	next, err := registration.Of(s.engine).ReturnTo(c.Request().Context(), r.userKey, form.ProcessIDString(), target)
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(c, next))
}
