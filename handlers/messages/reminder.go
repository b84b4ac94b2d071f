package messages

import (
	"context"
	"encoding/json"
	"fmt"

	"portal/engine"
	"portal/engine/jobs"
	"portal/handlers/mail"
	"portal/views"
)

// unpaidReminder composes the reminder of an order still unpaid: the
// registration's hash link, which opens its payment page. An order paid or
// cancelled since the reminder was queued gets nothing (errSkip).
func unpaidReminder(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p engine.UnpaidReminderPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID == 0 {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad reminder payload", msg.ID))
	}
	r, err := engine.LoadUnpaidReminder(ctx, d.DB, p)
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
	m := views.UnpaidReminderMailModel{Club: r.Organisation.Name, Subject: r.Organisation.Name + ": your membership payment is still open",
		Period: r.Period.Name, Total: engine.FormatMoney(r.Order.TotalMinor, r.Order.Currency), Days: p.Day, Link: link}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	out := &mail.Message{FromName: m.Club, To: r.Recipients, Subject: m.Subject, Headers: reminderHeaders(d)}
	if out.Text, err = views.UnpaidReminderText(m); err != nil {
		return nil, err
	}
	if out.HTML, err = render(ctx, views.UnpaidReminderMail(m)); err != nil {
		return nil, err
	}
	return out, nil
}

// reminderHeaders mark a reminder as automated and say how to stop them:
// List-Unsubscribe with a mailto to the sender's address, where staff
// receive the request (there is no automated opt-out yet).
func reminderHeaders(d Deps) map[string]string {
	h := map[string]string{"Auto-Submitted": "auto-generated"}
	if d.UnsubscribeAddress != "" {
		h["List-Unsubscribe"] = "<mailto:" + d.UnsubscribeAddress + "?subject=unsubscribe>"
	}
	return h
}
