package members

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/invitation"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/relay/invitelink"
	"portal/views"
)

// Invitation refusals: each renders a page that says what happened and
// signs nobody in.
const (
	invitationForged  = "invitation-invalid"
	invitationExpired = "invitation-expired"
	invitationRevoked = "invitation-revoked"
)

var invitationMessages = map[string]string{
	invitationForged:  "This invitation link is not valid. Open it from your e-mail again, in full, or ask the club for a new one.",
	invitationExpired: "This invitation link has expired. Ask the club for a new one.",
	invitationRevoked: "This invitation link was withdrawn by the club. If you still want to register, ask the club for a new one.",
}

// OpenInvitation answers GET /invite/:token: an invitation link (the
// portal's own, relay/invitelink). A link whose MAC verifies for the
// request's organisation, neither expired nor revoked, starts a session
// for its user key bound to the organisation, as a hash link does, and
// answers 303 to the period's registration (so the token leaves the
// address bar). Anything else is a page saying why, without a session.
// Forged links spend from the sign-in budgets like wrong hashes.
func (s *Server) OpenInvitation(c echo.Context) error {
	ctx := c.Request().Context()
	t := server.OrganisationOfRequest(c)
	if err := s.CheckSignIn(c, ""); err != nil {
		return err
	}
	if t == nil || s.Invitations() == nil {
		return s.invitationRefused(c, invitationForged)
	}
	id, expires, err := s.Invitations().Verify(t.ID, c.Param("token"))
	if err != nil {
		s.SignInFailed(c, "", "invitation link does not verify")
		return s.invitationRefused(c, invitationForged)
	}
	inv, err := invitation.Of(s.engine).OpenInvitation(ctx, t.ID, id)
	switch {
	case errors.Is(err, invitation.ErrInvitationExpired):
		return s.invitationRefused(c, invitationExpired)
	case errors.Is(err, invitation.ErrInvitationRevoked):
		return s.invitationRefused(c, invitationRevoked)
	case engine.ErrorCode(err) == engine.CodeNotFound:
		return s.invitationRefused(c, invitationForged) // signed by us, but the row is gone
	case err != nil:
		return err
	}
	if !expires.Equal(inv.ExpiresAt.Truncate(1e9)) {
		return s.invitationRefused(c, invitationForged)
	}
	if err := registration.Of(s.engine).CheckRegistrationAccess(ctx, inv.UserKey, inv.PeriodID); err != nil {
		switch engine.ErrorCode(err) {
		case engine.CodeNotFound, engine.CodeConflict:
			return s.AccessDenied(c, "period")
		}
		return err
	}
	if _, err := s.Sessions().Start(ctx, c.Response(), c.Request(), inv.UserKey, server.StartValues(c, nil)); err != nil {
		return server.SessionStoreError(err)
	}
	return c.Redirect(http.StatusSeeOther, server.RegisterPath(c, inv.PeriodID))
}

// invitationRefused renders the page of a refused invitation link: 410
// for one that expired or was withdrawn (it will not work again), 403 for
// one that is not ours.
func (s *Server) invitationRefused(c echo.Context, reason string) error {
	status := http.StatusGone
	if reason == invitationForged {
		status = http.StatusForbidden
	}
	m := views.ErrorModel{Chrome: s.Chrome("Invitation not valid"), Message: invitationMessages[reason]}
	c.Response().Header().Set("X-Robots-Tag", "noindex")
	return server.Render(c, status, views.ErrorPage(m))
}

// InvitationPath is where invitation links point.
const InvitationPath = invitelink.PathPrefix + ":token"
