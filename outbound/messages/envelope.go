package messages

import (
	"context"

	"portal/engine"
	"portal/engine/message"
	"portal/outbound/mail"
)

// envelope is a message of an organisation to recipients before its
// parts: signed with the organisation's sender settings (its From name,
// else its name; Reply-To its chosen address, else its contact address),
// marked automated, and, for a category members may unsubscribe from
// (engine.OptOutReminders, engine.OptOutRenewals; "" for transactional
// messages), without the addresses that did and with List-Unsubscribe.
// No recipient left: errSkip.
func envelope(ctx context.Context, d Deps, org engine.Organisation, category string, to []string, subject string) (*mail.Message, error) {
	s, err := message.SettingsOf(ctx, d.DB, org.ID)
	if err != nil {
		return nil, err
	}
	m := &mail.Message{FromName: s.SenderName, To: to, Subject: subject,
		// Automated, not a conversation: no out-of-office replies.
		Headers: map[string]string{"Auto-Submitted": "auto-generated"}}
	if m.FromName == "" {
		m.FromName = org.Name
	}
	if replyTo := s.ReplyTo; replyTo != "" {
		m.Headers["Reply-To"] = replyTo
	} else if org.ContactEmail != "" {
		m.Headers["Reply-To"] = org.ContactEmail
	}
	if category == "" {
		return m, nil
	}
	if m.To, err = message.WithoutOptOuts(ctx, d.DB, org.ID, category, to); err != nil {
		return nil, err
	}
	if len(m.To) == 0 {
		return nil, errSkip
	}
	if err := unsubscribeHeaders(ctx, d, org.ID, category, m); err != nil {
		return nil, err
	}
	return m, nil
}
