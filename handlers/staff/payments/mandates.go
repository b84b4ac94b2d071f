package payments

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/directdebit"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// flashMandateRevoked is the registration page's flash after staff
// revoked its mandate.
const flashMandateRevoked = "mandate-revoked"

func init() {
	staffpage.StaffFlashes[flashMandateRevoked] = func(c echo.Context) string {
		return staffview.MandateTextIn(c.Request().Context()).Revoked
	}
}

// StaffRevokeMandate answers POST /staff/mandates/:id/revoke (treasurers
// and administrators; the form names the registration it was shown on): after a confirmation that says what it
// does, the mandate of the staff member's organisation no longer holds
// (audited as mandate.revoke); back to the registration it was shown on.
func (s *Server) StaffRevokeMandate(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	back := staffpage.RequestOf(c).StaffPath(registrations.RegistrationsPath)
	if reg, err := strconv.ParseInt(c.FormValue("registration"), 10, 64); err == nil && reg > 0 {
		back = registrations.RegistrationURL(c, reg)
	}
	t := staffview.MandateTextIn(c.Request().Context())
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	m, err := directdebit.Of(s.engine).StaffMandate(c.Request().Context(), u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	if proceed, err := s.StaffAsked(c, staffpage.StaffQuestion{Question: fmt.Sprintf(t.RevokeQuestion, m.Reference), Detail: t.RevokeDetail,
		Yes: t.RevokeYes, No: t.RevokeNo}, back); !proceed {
		return err
	}
	if _, err := directdebit.Of(s.engine).StaffRevokeMandate(c.Request().Context(), u.Actor(), u.OrganisationID, id); err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+flashMandateRevoked)
}
