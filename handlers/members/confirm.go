package members

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/registration"
	"portal/handlers/server"
)

// Confirm answers POST /membership/register/:periodId/confirm: the commit
// (memberships pending payment, an unpaid order), then the done page.
func (s *Server) Confirm(c echo.Context) error {
	r, form, ok, err := s.currentForm(c)
	if !ok {
		return err
	}
	if form.State == engine.StateDone {
		// A double click: the first one committed.
		return c.Redirect(http.StatusSeeOther, stepURL(c, form))
	}
	reviewed, err := strconv.ParseInt(c.FormValue("version"), 10, 64)
	if err != nil {
		return s.showReview(c, http.StatusConflict, server.Tr(c, "flow_stale_notice"))
	}
	if _, err := registration.Of(s.engine).Confirm(c.Request().Context(), r.userKey, form.ProcessIDString(), reviewed, c.FormValue("paymentMethod")); err != nil {
		if engine.ErrorCode(err) == engine.CodeConflict {
			// Show the current answers to check again, or the current step.
			return s.showReview(c, http.StatusConflict, server.Tr(c, "flow_stale_notice"))
		}
		if e, ok := engine.AsError(err); ok && e.Code == engine.CodeValidation && len(e.People) > 0 {
			// A person who can no longer be registered (unlinked since the
			// selection): say who, on the review page, whose Change links
			// lead back to person selection.
			msgs := make([]string, len(e.People))
			for i, p := range e.People {
				msgs[i] = p.Message
			}
			return s.showReview(c, http.StatusUnprocessableEntity, strings.Join(msgs, " "))
		}
		if e, ok := engine.AsError(err); ok && len(e.Fields) == 1 && e.Fields[0].Field == "paymentMethod" {
			// A method the club no longer offers: choose again.
			return s.showReview(c, http.StatusUnprocessableEntity, e.Message)
		}
		if e, ok := engine.AsError(err); ok && (e.Code == engine.CodeConflict || e.Code == engine.CodeValidation) {
			return s.reloadWithNotice(c, r)
		}
		return err
	}
	return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, r.periodID, "done"))
}
