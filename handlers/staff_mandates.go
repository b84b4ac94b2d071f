package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/directdebit"
	"portal/views"
)

// flashMandateRevoked is the registration page's flash after staff
// revoked its mandate.
const flashMandateRevoked = "mandate-revoked"

func init() {
	staffFlashes[flashMandateRevoked] = func(c echo.Context) string {
		return views.StaffMandateTextIn(c.Request().Context()).Revoked
	}
}

// staffRevokeMandate answers POST /staff/mandates/:id/revoke (treasurers
// and administrators; the form names the registration it was shown on): after a confirmation that says what it
// does, the mandate of the staff member's organisation no longer holds
// (audited as mandate.revoke); back to the registration it was shown on.
func (s *Server) staffRevokeMandate(c echo.Context) error {
	u := staffUserOf(c)
	back := organisationPath(c, StaffPrefix+registrationsPath)
	if reg, err := strconv.ParseInt(c.FormValue("registration"), 10, 64); err == nil && reg > 0 {
		back = registrationURL(c, reg)
	}
	t := views.StaffMandateTextIn(c.Request().Context())
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	m, err := directdebit.Of(s.engine).StaffMandate(c.Request().Context(), u.OrganisationID, id)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	if proceed, err := s.staffAsked(c, staffQuestion{Question: fmt.Sprintf(t.RevokeQuestion, m.Reference), Detail: t.RevokeDetail,
		Yes: t.RevokeYes, No: t.RevokeNo}, back); !proceed {
		return err
	}
	if _, err := directdebit.Of(s.engine).StaffRevokeMandate(c.Request().Context(), u.actor(), u.OrganisationID, id); err != nil {
		return s.staffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+flashMandateRevoked)
}
