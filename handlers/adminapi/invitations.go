package adminapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine/invitation"
	"portal/handlers/server"
)

// The admin API's invitations: issue a period's invitation links (mailed
// by the portal, or returned for an external system to send), list them
// with what became of each, revoke one.

// InvitationRequestDTO is the body of POST /api/admin/periods/{id}/invitations:
// exactly one of all, externalIds and userKeys.
type InvitationRequestDTO struct {
	All         bool     `json:"all"`
	ExternalIDs []string `json:"externalIds"`
	UserKeys    []string `json:"userKeys"`
	// ExpiresInHours is the links' validity; 0 or absent: 720 (30 days).
	ExpiresInHours int `json:"expiresInHours"`
	// Send has the portal e-mail each household its link; false returns
	// the links only.
	Send bool `json:"send"`
}

// InvitationDTO is an invitation in the admin API. Link, the live link,
// is in the answer that issues it only: never in a list, never once revoked.
type InvitationDTO struct {
	ID         int64      `json:"id"`
	PeriodID   int64      `json:"periodId"`
	UserKey    string     `json:"userKey"`
	State      string     `json:"state"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	MailedAt   *time.Time `json:"mailedAt"`
	OpenedAt   *time.Time `json:"openedAt"`
	RevokedAt  *time.Time `json:"revokedAt"`
	Registered bool       `json:"registered"`
	Paid       bool       `json:"paid"`
	Persons    []string   `json:"persons"`
	Link       string     `json:"link,omitempty"`
}

// InvitationReportDTO answers an invitation request.
type InvitationReportDTO struct {
	Created []InvitationDTO   `json:"created"`
	Skipped []invitation.Skip `json:"skipped"`
}

// invitationLink is the link of inv, on its organisation's public address
// or, when the portal has none configured, on the address of this request.
func (s *Server) invitationLink(c echo.Context, inv invitation.Invitation) string {
	if s.Invitations() == nil || inv.RevokedAt != nil {
		return ""
	}
	base := invitation.Of(s.engine).PublicAddress(c.Request().Context(), inv.OrganisationID)
	if base == "" {
		base = c.Scheme() + "://" + c.Request().Host + server.OrganisationPath(c, "")
	}
	return s.Invitations().URL(base, inv.OrganisationID, inv.ID, inv.ExpiresAt)
}

// invitationDTO is st in the admin API; withLink adds its live link,
// which only issuing it shows (a list never does: whoever opens a link
// is signed in as the household).
func (s *Server) invitationDTO(c echo.Context, st invitation.Status, withLink bool) InvitationDTO {
	persons := st.Persons
	if persons == nil {
		persons = []string{}
	}
	dto := InvitationDTO{ID: st.ID, PeriodID: st.PeriodID, UserKey: st.UserKey, State: string(st.State), CreatedAt: st.CreatedAt,
		ExpiresAt: st.ExpiresAt, MailedAt: st.Mailed, OpenedAt: st.OpenedAt, RevokedAt: st.RevokedAt, Registered: st.Registered,
		Paid: st.Paid, Persons: persons}
	if withLink {
		dto.Link = s.invitationLink(c, st.Invitation)
	}
	return dto
}

// createInvitations answers POST /api/admin/periods/:id/invitations.
func (s *Server) createInvitations(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	var body InvitationRequestDTO
	if err := server.DecodeJSON(c.Request().Body, &body); err != nil {
		return err
	}
	if s.Invitations() == nil {
		return server.NewAPIError(http.StatusServiceUnavailable, "Invitations need the portal's session key (PORTAL_SESSION_KEY), which is not configured.")
	}
	rep, err := invitation.Of(s.engine).CreateInvitations(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, invitation.Request{PeriodID: id,
		All: body.All, ExternalIDs: body.ExternalIDs, UserKeys: body.UserKeys, Expires: time.Duration(body.ExpiresInHours) * time.Hour, Send: body.Send})
	if err != nil {
		return adminError(err)
	}
	out := InvitationReportDTO{Created: make([]InvitationDTO, 0, len(rep.Created)), Skipped: rep.Skipped}
	for _, inv := range rep.Created {
		out.Created = append(out.Created, s.invitationDTO(c, invitation.Status{Invitation: inv, State: invitation.InvitationInvited,
			Persons: rep.Persons[inv.UserKey]}, true))
	}
	return c.JSON(http.StatusCreated, out)
}

// listInvitations answers GET /api/admin/periods/:id/invitations.
func (s *Server) listInvitations(c echo.Context) error {
	id, err := periodIDParam(c)
	if err != nil {
		return err
	}
	list, err := invitation.Of(s.engine).Invitations(c.Request().Context(), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	out := make([]InvitationDTO, 0, len(list))
	for _, st := range list {
		out = append(out, s.invitationDTO(c, st, false))
	}
	return c.JSON(http.StatusOK, out)
}

// revokeInvitation answers POST /api/admin/invitations/:id/revoke: the
// link is refused from then on; revoking again changes nothing.
func (s *Server) revokeInvitation(c echo.Context) error {
	id, err := idParam(c, "id", "invitation")
	if err != nil {
		return err
	}
	inv, err := invitation.Of(s.engine).RevokeInvitation(c.Request().Context(), apiActor(c), keyOf(c).OrganisationID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.invitationDTO(c, invitation.Status{Invitation: *inv, State: invitation.InvitationRevoked}, false))
}
