package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/outbound/mail"
	"portal/outbound/optout"
	"portal/views/lang"
	"portal/views/mailview"
)

// unpaidReminder composes the reminder of an order still unpaid: the
// registration's hash link, which opens its payment page. An order paid or
// cancelled since the reminder was queued gets nothing (errSkip).
func unpaidReminder(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p message.UnpaidReminderPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID == 0 {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad reminder payload", msg.ID))
	}
	r, err := message.LoadUnpaidReminder(ctx, d.DB, p)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	if !r.Due {
		return nil, errSkip
	}
	link, err := registrationLink(ctx, d, r.Period.ID, r.UserKey)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(r.Language, r.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.UnpaidReminderModel{Club: r.Organisation.Name, Subject: l.T("mail_unpaid_subject", map[string]any{"Club": r.Organisation.Name}),
		Period: r.Period.Name, Total: l.Money(r.Order.TotalMinor, r.Order.Currency), Days: p.Day, Link: link}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	transfer, err := transferOf(ctx, d, &r.Order)
	if err != nil {
		return nil, err
	}
	if transfer != nil {
		// The reminder asks for what is still open, not the whole total.
		m.Transfer, m.Total = transfer.Model, l.Money(transfer.OwedMinor, r.Order.Currency)
	}
	out, err := envelope(ctx, d, r.Organisation, message.OptOutReminders, r.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	if transfer != nil {
		out.Attachments = append(out.Attachments, transfer.QR)
	}
	return withBodies(ctx, out, m, mailview.UnpaidReminderText, mailview.UnpaidReminder)
}

// unsubscribeHeaders say how to stop a category of messages
// (List-Unsubscribe): the one-click https link (RFC 8058) with a token
// naming the organisation, the category and the message's recipients,
// signed with the environment's hash secret, and a mailto to the sender's
// address, where staff receive the request.
func unsubscribeHeaders(ctx context.Context, d Deps, orgID int64, category string, m *mail.Message) error {
	var links []string
	if d.HashSecret != "" {
		base, err := engine.OrganisationAddress(ctx, d.DB, d.BaseURL, orgID)
		if err != nil {
			return err
		}
		token := optout.Sign(d.HashSecret, optout.Token{Organisation: orgID, Category: category, Addresses: m.To})
		links = append(links, "<"+base+"/unsubscribe?t="+token+">")
		m.Headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
	}
	if d.UnsubscribeAddress != "" {
		links = append(links, "<mailto:"+d.UnsubscribeAddress+"?subject=unsubscribe>")
	}
	if len(links) > 0 {
		m.Headers["List-Unsubscribe"] = strings.Join(links, ", ")
	}
	return nil
}
