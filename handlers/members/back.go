package members

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
)

// BackStep answers POST /membership/register/:periodId/back (field step:
// the step the member is leaving): the previous step, with its answers.
func (s *Server) BackStep(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	from, err := strconv.Atoi(c.FormValue("step"))
	if err != nil {
		return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
	}
	next, err := registration.Of(s.engine).Back(c.Request().Context(), r.userKey, form.ProcessIDString(), &from)
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.renderCurrent(c, form, server.Tr(c, "flow_stale_notice"))
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, stepURL(c, next))
}
