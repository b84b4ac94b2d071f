package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/registration"
	"portal/outbound/mail"
	"portal/relay/hashlink"
	"portal/views/lang"
	"portal/views/mailview"
)

// resumeLink composes the e-mail to a registration that was suspended
// after a day without activity: a hash link (the same kind of link staff
// send) to the period's registration, which opens it where the member
// left it and moves it back to RUNNING.
func resumeLink(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p registration.ResumeLinkPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.InstanceID == 0 {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad resume-link payload", msg.ID))
	}
	to, err := registration.ResumeRecipients(ctx, d.DB, p)
	if err != nil {
		return nil, err
	}
	org, persons, err := registration.ResumeContext(ctx, d.DB, p)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	link, err := registrationLink(ctx, d, p.PeriodID, p.UserKey)
	if err != nil {
		return nil, err
	}
	code, err := message.RegistrationLanguage(ctx, d.DB, p.InstanceID)
	if err != nil {
		return nil, err
	}
	l := memberLanguage(code, org.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.ResumeModel{Club: org.Name, Subject: l.T("mail_resume_subject", map[string]any{"Club": org.Name}), Persons: persons, Link: link}
	out, err := envelope(ctx, d, org, message.OptOutReminders, to, m.Subject)
	if err != nil {
		return nil, err
	}
	out.Headers["X-Portal-Registration"] = strconv.FormatInt(p.InstanceID, 10)
	return withBodies(ctx, out, m, mailview.ResumeText, mailview.Resume)
}

// registrationLink is the signed hash link to a period's registration of
// userKey: the link staff send, which opens the registration where it is.
// It is made for the period's organisation: on its own address and signed
// with its own hash secret (see orgAddress), since the portal resolves the
// organisation from the link's host and checks the hash with its secret.
func registrationLink(ctx context.Context, d Deps, periodID int64, userKey string) (string, error) {
	var period engine.MembershipPeriod
	if err := d.DB.NewSelect().Model(&period).Column("id", "organisation_id").Where("id = ?", periodID).Scan(ctx); err != nil {
		return "", fmt.Errorf("load period %d: %w", periodID, err)
	}
	base, secret, err := orgAddress(ctx, d, period.OrganisationID)
	if err != nil {
		return "", err
	}
	if secret == "" {
		return "", jobs.Permanent(fmt.Errorf("no hash secret to sign the link"))
	}
	return fmt.Sprintf("%s/membership/register/%d?u=%s&h=%s", base, periodID, url.QueryEscape(userKey), hashlink.Sign(secret, userKey)), nil
}

// orgAddress is where an organisation's members open their registration
// (engine.OrganisationAddress) and the secret its hash links are signed
// with: its own, else the environment's.
func orgAddress(ctx context.Context, d Deps, orgID int64) (base, secret string, err error) {
	var org engine.Organisation
	if err := d.DB.NewSelect().Model(&org).Where("id = ?", orgID).Scan(ctx); err != nil {
		return "", "", fmt.Errorf("load organisation %d: %w", orgID, err)
	}
	secret = d.HashSecret
	if org.HashSecretSealed != "" {
		if d.OpenHashSecret == nil {
			return "", "", jobs.Permanent(fmt.Errorf("organisation %d has a hash secret of its own but no key to open it", orgID))
		}
		if secret, err = d.OpenHashSecret(orgID, org.HashSecretSealed); err != nil {
			return "", "", jobs.Permanent(fmt.Errorf("open the hash secret of organisation %d: %w", orgID, err))
		}
	}
	if base, err = engine.OrganisationAddress(ctx, d.DB, d.BaseURL, orgID); err != nil {
		return "", "", err
	}
	return base, secret, nil
}
