package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"portal/engine"
	"portal/engine/jobs"
	"portal/handlers/mail"
	"portal/relay/hashlink"
	"portal/views"
)

// resumeLink composes the e-mail to a registration that was suspended
// after a day without activity: a hash link (the same kind of link staff
// send) to the period's registration, which opens it where the member
// left it and moves it back to RUNNING.
func resumeLink(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p engine.ResumeLinkPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.InstanceID == 0 {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad resume-link payload", msg.ID))
	}
	to, err := engine.ResumeRecipients(ctx, d.DB, p)
	if err != nil {
		return nil, err
	}
	club, persons, err := engine.ResumeContext(ctx, d.DB, p)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	link, err := registrationLink(d, p.PeriodID, p.UserKey)
	if err != nil {
		return nil, err
	}
	m := views.ResumeMailModel{Club: club, Subject: club + ": your registration is waiting for you", Persons: persons, Link: link}
	out := &mail.Message{FromName: club, To: to, Subject: m.Subject,
		// Automated, not a conversation: no out-of-office replies.
		Headers: reminderHeaders(d)}
	out.Headers["X-Portal-Registration"] = strconv.FormatInt(p.InstanceID, 10)
	if out.Text, err = views.ResumeText(m); err != nil {
		return nil, err
	}
	if out.HTML, err = render(ctx, views.ResumeMail(m)); err != nil {
		return nil, err
	}
	return out, nil
}

// registrationLink is the signed hash link to a period's registration of
// userKey: the link staff send, which opens the registration where it is.
func registrationLink(d Deps, periodID int64, userKey string) (string, error) {
	if d.HashSecret == "" {
		return "", jobs.Permanent(fmt.Errorf("no hash secret to sign the link"))
	}
	return fmt.Sprintf("%s/membership/register/%d?u=%s&h=%s", d.BaseURL, periodID, url.QueryEscape(userKey), hashlink.Sign(d.HashSecret, userKey)), nil
}
