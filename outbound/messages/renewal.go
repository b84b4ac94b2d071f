package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
)

// renewalPrompt composes the renewal prompt of a household: the signed
// hash link into the next period's registration, on the club's own
// address, which starts it with last season's answers filled in. Nothing
// is sent when every person registered since it was queued, or when the
// next period stopped taking registrations.
func renewalPrompt(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p message.RenewalPromptPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.NextPeriodID == 0 || p.UserKey == "" {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad renewal payload", msg.ID))
	}
	r, err := message.LoadRenewalPrompt(ctx, d.DB, p)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	if len(r.Persons) == 0 || len(r.Recipients) == 0 || !r.Next.AcceptsRegistrations(d.Now()) {
		return nil, errSkip
	}
	link, err := registrationLink(ctx, d, r.Next.ID, p.UserKey)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(r.Language, r.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.RenewalModel{Club: r.Organisation.Name, Subject: l.T("mail_renewal_subject", map[string]any{"Club": r.Organisation.Name, "Next": r.Next.Name}),
		Ending: r.Ending.Name, Ends: l.Date(r.Ending.EndDate), Ended: endedBefore(r.Ending.EndDate, d.Now()),
		Next: r.Next.Name, Link: link, Contact: r.Organisation.ContactEmail}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName)
	}
	out, err := envelope(ctx, d, r.Organisation, message.OptOutRenewals, r.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	return withBodies(ctx, out, m, mailview.RenewalText, mailview.Renewal)
}

// endedBefore says whether a period whose last day is lastDay (a date) was
// over at now: the membership holds through its last day, so it has ended
// from the next day on.
func endedBefore(lastDay, now time.Time) bool {
	dayAfter := time.Date(lastDay.Year(), lastDay.Month(), lastDay.Day()+1, 0, 0, 0, 0, time.UTC)
	return !now.UTC().Before(dayAfter)
}
