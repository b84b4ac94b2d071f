package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"portal/engine"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
)

// invitation composes the e-mail inviting a household to a period with
// its personal link (relay/invitelink). An invitation revoked or expired
// since it was queued, or a household that registered meanwhile, gets
// nothing.
func invitationMail(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p invitation.Payload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.InvitationID == 0 {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad invitation payload", msg.ID))
	}
	if d.Invitations == nil {
		return nil, jobs.Permanent(errors.New("no key to sign invitation links (PORTAL_SESSION_KEY)"))
	}
	inv, err := invitation.LoadInvitationMail(ctx, d.DB, p, d.Now())
	if errors.Is(err, invitation.ErrNotDue) {
		return nil, errSkip
	}
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, inv.Invitation.OrganisationID)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(inv.Language, inv.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.InvitationModel{Club: inv.Club, Subject: l.T("mail_invitation_subject", map[string]any{"Club": inv.Club, "Period": inv.Period}), Period: inv.Period,
		Persons: inv.Persons, Expires: l.Date(inv.Invitation.ExpiresAt),
		Link: d.Invitations.URL(base, inv.Invitation.OrganisationID, inv.Invitation.ID, inv.Invitation.ExpiresAt)}
	// An invitation asks the household to register, as a renewal prompt
	// does: an address that unsubscribed from those gets none.
	out, err := envelope(ctx, d, inv.Organisation, message.OptOutRenewals, inv.To, m.Subject)
	if err != nil {
		return nil, err
	}
	out.Headers["X-Portal-Invitation"] = strconv.FormatInt(inv.Invitation.ID, 10)
	return withBodies(ctx, out, m, mailview.InvitationText, mailview.Invitation)
}
