package messages

import (
	"context"
	"encoding/json"
	"fmt"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
)

// welcome composes the welcome of a person whose first membership with
// the organisation became active.
func welcome(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	m, model, ctx, err := memberMessage(ctx, d, msg)
	if err != nil {
		return nil, err
	}
	model.Subject = lang.T(ctx, "mail_welcome_subject", map[string]any{"Club": model.Club})
	out, err := envelope(ctx, d, m.Organisation, "", m.Recipients, model.Subject)
	if err != nil {
		return nil, err
	}
	return withBodies(ctx, out, model, mailview.WelcomeText, mailview.Welcome)
}

// expiryReminder composes the reminder before a membership's period ends.
func expiryReminder(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	m, model, ctx, err := memberMessage(ctx, d, msg)
	if err != nil {
		return nil, err
	}
	model.Subject = lang.T(ctx, "mail_expiry_subject", map[string]any{"Club": model.Club, "Ends": model.Ends})
	out, err := envelope(ctx, d, m.Organisation, message.OptOutReminders, m.Recipients, model.Subject)
	if err != nil {
		return nil, err
	}
	return withBodies(ctx, out, model, mailview.ExpiryText, mailview.Expiry)
}

// memberMessage loads what a membership message is about, and returns ctx
// in the member's language; a membership no longer active (cancelled
// since) or a person without any address to write to gets nothing
// (errSkip).
func memberMessage(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*message.MemberMessage, mailview.MemberModel, context.Context, error) {
	var p message.MemberMessagePayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.MembershipID == 0 {
		return nil, mailview.MemberModel{}, ctx, jobs.Permanent(fmt.Errorf("outbox message %d: bad membership payload", msg.ID))
	}
	m, err := message.LoadMemberMessage(ctx, d.DB, p)
	if err != nil {
		return nil, mailview.MemberModel{}, ctx, permanentIfFinal(err)
	}
	if !m.Due || len(m.Recipients) == 0 {
		return nil, mailview.MemberModel{}, ctx, errSkip
	}
	l := memberLanguage(m.Language, m.Organisation.DefaultLanguage)
	return m, mailview.MemberModel{Club: m.Organisation.Name, Name: m.Person.FirstName, Type: m.Type.Name, Period: m.Period.Name,
		Ends: l.Date(m.Period.EndDate), Contact: m.Organisation.ContactEmail}, lang.With(ctx, l), nil
}
