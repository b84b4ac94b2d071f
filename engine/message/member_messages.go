package message

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Messages about a person's membership rather than an order: the welcome
// after a person's first membership with an organisation became active,
// and the reminder before a membership's period ends. Both are keyed by
// what they are about (the person and organisation; the membership), so
// every re-run, replayed payment or second instance queues each once.

// Message kinds of membership messages.
const (
	KindWelcome        engine.MessageKind = "welcome"
	KindExpiryReminder engine.MessageKind = "membership_expiry"
)

// MemberMessagePayload names what a membership message is about.
type MemberMessagePayload struct {
	PersonID       int64 `json:"personId"`
	OrganisationID int64 `json:"organisationId"`
	MembershipID   int64 `json:"membershipId"`
}

// welcomeDelay is how long after its activation a first membership gets
// its welcome: not in the same minute as the payment's confirmation, which
// would double the member's mail for one event.
const welcomeDelay = time.Hour

// welcomeWindow bounds how far back the welcome job looks, so that turning
// the portal's messages on does not welcome every member of past seasons.
const welcomeWindow = 7 * 24 * time.Hour

// QueueWelcomes queues the welcome of every person whose first membership
// with an organisation became active between welcomeWindow and
// welcomeDelay ago. It returns how many it found (welcomes queued before
// count again; their keys, per organisation and person, keep them single).
func QueueWelcomes(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	now = now.UTC()
	var ms []engine.Membership
	// A renewal is not new to the club, even when the portal's records do
	// not go back to the person's first season.
	if err := engine.ScopeOrg(ctx, db.NewSelect().Model(&ms), "(SELECT p.organisation_id FROM membership_periods AS p WHERE p.id = membership.period_id)").Where("status = ? AND member_type <> ? AND activated_at <= ? AND activated_at > ?", engine.MembershipActive,
		engine.MemberRenewal, now.Add(-welcomeDelay), now.Add(-welcomeWindow)).OrderExpr("id").Scan(ctx); err != nil {
		return 0, fmt.Errorf("find activated memberships: %w", err)
	}
	periods, err := periodsByID(ctx, db)
	if err != nil {
		return 0, err
	}
	var msgs []*engine.OutboxMessage
	for _, m := range ms {
		org := periods[m.PeriodID].OrganisationID
		// An earlier membership with the organisation (activated before
		// this one) means the person is not new.
		earlier, err := db.NewSelect().Model((*engine.Membership)(nil)).
			Where("person_id = ? AND id <> ? AND activated_at IS NOT NULL AND (activated_at < ? OR (activated_at = ? AND id < ?))",
				m.PersonID, m.ID, m.ActivatedAt, m.ActivatedAt, m.ID).
			Where("period_id IN (?)", db.NewSelect().Model((*engine.MembershipPeriod)(nil)).Column("id").Where("organisation_id = ?", org)).
			Exists(ctx)
		if err != nil {
			return 0, fmt.Errorf("earlier memberships of person %d: %w", m.PersonID, err)
		}
		if earlier {
			continue
		}
		payload, _ := json.Marshal(MemberMessagePayload{PersonID: m.PersonID, OrganisationID: org, MembershipID: m.ID})
		msgs = append(msgs, &engine.OutboxMessage{Kind: KindWelcome, DedupKey: fmt.Sprintf("%s:org:%d:person:%d", KindWelcome, org, m.PersonID),
			Payload: string(payload), CreatedAt: now})
	}
	if err := store.QueueMessagesNow(ctx, db, msgs); err != nil {
		return 0, err
	}
	return len(msgs), nil
}

// QueueExpiryReminders queues the reminder of every active membership
// whose period ends within its organisation's expiry reminder days
// (Settings.ExpiryReminderDays) of now and has not ended, unless
// the next period already takes registrations. It
// returns how many memberships it found (reminders queued before count
// again; their keys keep them single).
func QueueExpiryReminders(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	settings, err := AllMessageSettings(ctx, db)
	if err != nil {
		return 0, err
	}
	today := now.UTC().Truncate(24 * time.Hour)
	// The periods ending in the window, decided in Go on the dates as
	// scanned: SQLite keeps dates as text, whose comparison with a bound
	// depends on how each was written.
	periods, err := periodsByID(ctx, db)
	if err != nil {
		return 0, err
	}
	// A period whose successor already takes registrations gets renewal
	// prompts instead (renewals.go): its reminder would promise a link
	// that is already on its way, and remind those who renewed.
	renewing := map[int64]bool{}
	for _, next := range periods {
		if prev := previousPeriod(periods, next); prev != nil && next.AcceptsRegistrations(now) {
			renewing[prev.ID] = true
		}
	}
	var ending []int64
	for _, p := range periods {
		end := time.Date(p.EndDate.Year(), p.EndDate.Month(), p.EndDate.Day(), 0, 0, 0, 0, time.UTC)
		if !renewing[p.ID] && !end.Before(today) && !end.After(today.AddDate(0, 0, settings.Of(p.OrganisationID).ExpiryReminderDays)) {
			ending = append(ending, p.ID)
		}
	}
	if len(ending) == 0 {
		return 0, nil
	}
	var rows []engine.Membership
	if err := db.NewSelect().Model(&rows).Where("status = ? AND period_id IN (?)", engine.MembershipActive, bun.List(ending)).
		OrderExpr("id").Scan(ctx); err != nil {
		return 0, fmt.Errorf("find memberships ending soon: %w", err)
	}
	msgs := make([]*engine.OutboxMessage, len(rows))
	for i, r := range rows {
		payload, _ := json.Marshal(MemberMessagePayload{PersonID: r.PersonID, OrganisationID: periods[r.PeriodID].OrganisationID, MembershipID: r.ID})
		msgs[i] = &engine.OutboxMessage{Kind: KindExpiryReminder, DedupKey: fmt.Sprintf("%s:membership:%d", KindExpiryReminder, r.ID),
			Payload: string(payload), CreatedAt: now.UTC()}
	}
	if err := store.QueueMessagesNow(ctx, db, msgs); err != nil {
		return 0, err
	}
	return len(rows), nil
}

// MemberMessage is what a welcome or expiry reminder says.
type MemberMessage struct {
	Organisation engine.Organisation
	Person       engine.Person
	Type         engine.MembershipType
	Period       engine.MembershipPeriod
	Membership   engine.Membership
	// Due is false when the membership is no longer active (cancelled
	// since the message was queued): nothing is sent.
	Due bool
	// Recipients: the person's address, or, for a person without one
	// (a junior), the addresses of the registration's other persons.
	Recipients []string
	// Language is the one the membership's registration was made in, else
	// the person's household's last one; "" for the organisation's default.
	Language string
}

// LoadMemberMessage gathers a membership message.
func LoadMemberMessage(ctx context.Context, db bun.IDB, p MemberMessagePayload) (*MemberMessage, error) {
	m := &MemberMessage{}
	if err := db.NewSelect().Model(&m.Membership).Where("id = ?", p.MembershipID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "membership")
	}
	m.Due = m.Membership.Status == engine.MembershipActive
	if err := db.NewSelect().Model(&m.Person).Where("id = ?", m.Membership.PersonID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "person")
	}
	if err := db.NewSelect().Model(&m.Type).Where("id = ?", m.Membership.MembershipTypeID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "membership type")
	}
	period, err := store.LoadPeriod(ctx, db, m.Membership.PeriodID)
	if err != nil {
		return nil, err
	}
	m.Period = *period
	if err := db.NewSelect().Model(&m.Organisation).Where("id = ?", m.Period.OrganisationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "organisation")
	}
	m.Recipients = store.UniqueAddresses([]engine.Person{m.Person})
	if len(m.Recipients) == 0 && m.Membership.ProcessInstanceID != nil {
		var ids []int64
		if err := db.NewSelect().Model((*engine.Membership)(nil)).Column("person_id").
			Where("process_instance_id = ?", *m.Membership.ProcessInstanceID).OrderExpr("person_id").Scan(ctx, &ids); err != nil {
			return nil, fmt.Errorf("load the registration's persons: %w", err)
		}
		household, err := store.PersonsByID(ctx, db, ids)
		if err != nil {
			return nil, err
		}
		m.Recipients = store.UniqueAddresses(household)
	}
	if m.Membership.ProcessInstanceID != nil {
		if m.Language, err = RegistrationLanguage(ctx, db, *m.Membership.ProcessInstanceID); err != nil {
			return nil, err
		}
	}
	if m.Language == "" {
		if m.Language, err = personLanguage(ctx, db, m.Organisation.ID, m.Person.ID); err != nil {
			return nil, err
		}
	}
	m.Type.Localize(m.Language)
	m.Period.Localize(m.Language)
	return m, nil
}

// periodsByID loads every period, for the scheduled jobs that need the
// organisation or the dates of many memberships' periods: one query
// instead of one per membership.
func periodsByID(ctx context.Context, db bun.IDB) (map[int64]engine.MembershipPeriod, error) {
	var periods []engine.MembershipPeriod
	if err := engine.ScopeOrg(ctx, db.NewSelect().Model(&periods), "organisation_id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	byID := make(map[int64]engine.MembershipPeriod, len(periods))
	for _, p := range periods {
		byID[p.ID] = p
	}
	return byID, nil
}
