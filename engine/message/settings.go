package message

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// An organisation's message settings (organisation_message_settings):
// when its reminders go out and how its e-mail is signed. Each setting
// left unset takes the portal's default, so the stored row holds only
// what the organisation chose.

// Settings are an organisation's effective message settings.
type Settings struct {
	// UnpaidReminderDays are the days after the commit on which an unpaid
	// order is reminded, ascending.
	UnpaidReminderDays []int
	// ExpiryReminderDays is how long before its period ends a membership
	// is reminded.
	ExpiryReminderDays int
	// ResumeAfter is how long a registration may sit idle before it is
	// SUSPENDED and its member gets the link back.
	ResumeAfter time.Duration
	// RenewalLeadDays is how long before the ending period's last day
	// renewal prompts may start (renewals.go).
	RenewalLeadDays int
	// SenderName is the From name of the organisation's e-mail; "": its name.
	SenderName string
	// ReplyTo is where replies go; "": the organisation's contact address.
	ReplyTo string
}

// DefaultMessageSettings are the settings of an organisation that chose
// none: reminders on days 3 and 10 after an unpaid commit (a weekend and a
// week later), 30 days before a membership ends, a day of inactivity
// before the resume link, renewal prompts from 30 days before the end.
func DefaultMessageSettings() Settings {
	return Settings{UnpaidReminderDays: []int{3, 10}, ExpiryReminderDays: 30, ResumeAfter: SuspendAfter, RenewalLeadDays: DefaultRenewalLeadDays}
}

// messageSettingsRow is the stored row; nil columns take the default.
type messageSettingsRow struct {
	bun.BaseModel      `bun:"table:organisation_message_settings"`
	OrganisationID     int64   `bun:"organisation_id,pk"`
	UnpaidReminderDays *string `bun:"unpaid_reminder_days"`
	ExpiryReminderDays *int    `bun:"expiry_reminder_days"`
	ResumeAfterHours   *int    `bun:"resume_after_hours"`
	RenewalLeadDays    *int    `bun:"renewal_lead_days"`
	SenderName         *string `bun:"sender_name"`
	ReplyTo            *string `bun:"reply_to"`
}

// effective applies the row over the defaults.
func (r *messageSettingsRow) effective() Settings {
	s := DefaultMessageSettings()
	if r == nil {
		return s
	}
	if r.UnpaidReminderDays != nil {
		if days, err := parseDays(*r.UnpaidReminderDays); err == nil && len(days) > 0 {
			s.UnpaidReminderDays = days
		}
	}
	for _, x := range []struct {
		v   *int
		dst *int
	}{{r.ExpiryReminderDays, &s.ExpiryReminderDays}, {r.RenewalLeadDays, &s.RenewalLeadDays}} {
		if x.v != nil {
			*x.dst = *x.v
		}
	}
	if r.ResumeAfterHours != nil {
		s.ResumeAfter = time.Duration(*r.ResumeAfterHours) * time.Hour
	}
	if r.SenderName != nil {
		s.SenderName = *r.SenderName
	}
	if r.ReplyTo != nil {
		s.ReplyTo = *r.ReplyTo
	}
	return s
}

// parseDays reads a stored list of days ("3,10").
func parseDays(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		d, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out, nil
}

// SettingsOf loads an organisation's effective message settings.
func SettingsOf(ctx context.Context, db bun.IDB, orgID int64) (Settings, error) {
	row := new(messageSettingsRow)
	err := db.NewSelect().Model(row).Where("organisation_id = ?", orgID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		row = nil
	} else if err != nil {
		return Settings{}, fmt.Errorf("load message settings: %w", err)
	}
	return row.effective(), nil
}

// SettingsByOrganisation are every organisation's effective
// message settings, for the scheduled jobs; Of gives the defaults to an
// organisation without a row.
type SettingsByOrganisation map[int64]Settings

// Of is an organisation's settings.
func (m SettingsByOrganisation) Of(orgID int64) Settings {
	if s, ok := m[orgID]; ok {
		return s
	}
	return DefaultMessageSettings()
}

// AllMessageSettings loads the settings of every organisation that has any.
func AllMessageSettings(ctx context.Context, db bun.IDB) (SettingsByOrganisation, error) {
	var rows []messageSettingsRow
	if err := db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load message settings: %w", err)
	}
	out := make(SettingsByOrganisation, len(rows))
	for i := range rows {
		out[rows[i].OrganisationID] = rows[i].effective()
	}
	return out, nil
}

// SettingsChange changes an organisation's message settings: nil
// fields stay as they are; a zero value (an empty list, 0, "") returns the
// setting to the default.
type SettingsChange struct {
	UnpaidReminderDays *[]int
	ExpiryReminderDays *int
	ResumeAfterHours   *int
	RenewalLeadDays    *int
	SenderName         *string
	ReplyTo            *string
}

// Bounds of the message settings.
const (
	maxReminderDays   = 365
	maxUnpaidSettings = 5
	maxResumeHours    = 30 * 24
)

// Validate names every invalid field (prefixed by prefix, such as
// "messages.") and normalises the rest.
func (c *SettingsChange) Validate(prefix string) []engine.FieldError {
	var fields []engine.FieldError
	bad := func(f, m string) { fields = append(fields, engine.FieldError{Field: prefix + f, Message: m}) }
	if c.UnpaidReminderDays != nil {
		days := slices.Clone(*c.UnpaidReminderDays)
		slices.Sort(days)
		switch {
		case len(days) > maxUnpaidSettings:
			bad("unpaidReminderDays", fmt.Sprintf("at most %d days", maxUnpaidSettings))
		case slices.ContainsFunc(days, func(d int) bool { return d < 1 || d > maxReminderDays }):
			bad("unpaidReminderDays", fmt.Sprintf("each day must be 1 to %d", maxReminderDays))
		case len(slices.Compact(slices.Clone(days))) != len(days):
			bad("unpaidReminderDays", "each day once")
		default:
			*c.UnpaidReminderDays = days
		}
	}
	for _, x := range []struct {
		name     string
		v        *int
		min, max int
	}{{"expiryReminderDays", c.ExpiryReminderDays, 1, maxReminderDays}, {"resumeAfterHours", c.ResumeAfterHours, 1, maxResumeHours},
		{"renewalLeadDays", c.RenewalLeadDays, 1, maxReminderDays}} {
		if x.v != nil && *x.v != 0 && (*x.v < x.min || *x.v > x.max) {
			bad(x.name, fmt.Sprintf("must be %d to %d (0: the default)", x.min, x.max))
		}
	}
	if c.SenderName != nil {
		*c.SenderName = strings.TrimSpace(*c.SenderName)
		if !engine.Printable(*c.SenderName, 100) || strings.ContainsAny(*c.SenderName, "<>\"") {
			bad("senderName", "must be at most 100 printable characters, without < > or \"")
		}
	}
	if c.ReplyTo != nil && *c.ReplyTo != "" {
		if a, err := mail.ParseAddress(*c.ReplyTo); err != nil || a.Address != *c.ReplyTo {
			bad("replyTo", "must be an e-mail address such as office@club.example.org")
		}
	}
	return fields
}

// apply writes the change over row.
func (c *SettingsChange) apply(row *messageSettingsRow) {
	if c.UnpaidReminderDays != nil {
		row.UnpaidReminderDays = nil
		if len(*c.UnpaidReminderDays) > 0 {
			parts := make([]string, len(*c.UnpaidReminderDays))
			for i, d := range *c.UnpaidReminderDays {
				parts[i] = strconv.Itoa(d)
			}
			row.UnpaidReminderDays = new(strings.Join(parts, ","))
		}
	}
	for _, x := range []struct {
		v   *int
		dst **int
	}{{c.ExpiryReminderDays, &row.ExpiryReminderDays}, {c.ResumeAfterHours, &row.ResumeAfterHours}, {c.RenewalLeadDays, &row.RenewalLeadDays}} {
		if x.v != nil {
			*x.dst = nil
			if *x.v != 0 {
				*x.dst = new(*x.v)
			}
		}
	}
	for _, x := range []struct {
		v   *string
		dst **string
	}{{c.SenderName, &row.SenderName}, {c.ReplyTo, &row.ReplyTo}} {
		if x.v != nil {
			*x.dst = nil
			if *x.v != "" {
				*x.dst = new(*x.v)
			}
		}
	}
}

// checkMessageSettings validates a change without applying it, so a
// caller changing more in one request can refuse it before any write. Its
// fields are named as in the admin API ("messages.renewalLeadDays").
func checkMessageSettings(c SettingsChange) error {
	if fields := c.Validate("messages."); len(fields) > 0 {
		return &engine.Error{Code: engine.CodeValidation, Message: "Some settings are not valid.", Fields: fields}
	}
	return nil
}

// UpdateMessageSettings applies a change to an organisation's message
// settings in one transaction; an invalid field changes nothing.
func (s *Service) UpdateMessageSettings(ctx context.Context, orgID int64, c SettingsChange) (_ Settings, err error) {
	return s.updateMessageSettings(ctx, nil, orgID, c)
}

// StaffUpdateMessageSettings is UpdateMessageSettings by a staff member,
// audited in its transaction.
func (s *Service) StaffUpdateMessageSettings(ctx context.Context, actor engine.Actor, orgID int64, c SettingsChange) (Settings, error) {
	return s.updateMessageSettings(ctx, &actor, orgID, c)
}

// messageSettingsAuditView is what the audit log keeps of message
// settings: the effective values, as the admin API names them.
func messageSettingsAuditView(m Settings) map[string]any {
	return map[string]any{"unpaidReminderDays": m.UnpaidReminderDays, "expiryReminderDays": m.ExpiryReminderDays,
		"resumeAfterHours": int(m.ResumeAfter / time.Hour), "renewalLeadDays": m.RenewalLeadDays, "senderName": m.SenderName, "replyTo": m.ReplyTo}
}

// updateMessageSettings is UpdateMessageSettings, audited when actor is set.
func (s *Service) updateMessageSettings(ctx context.Context, actor *engine.Actor, orgID int64, c SettingsChange) (_ Settings, err error) {
	if !engine.InScope(ctx, orgID) {
		return Settings{}, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if err := checkMessageSettings(c); err != nil {
		return Settings{}, err
	}
	var out Settings
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if _, err := engine.LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		out, err = s.StoreMessageSettings(ctx, tx, actor, orgID, c)
		return err
	})
	return out, err
}

// StoreMessageSettings applies a checked change inside tx (also
// updateOrganisation's, when one request changes both), audited when actor
// is set.
func (s *Service) StoreMessageSettings(ctx context.Context, tx bun.Tx, actor *engine.Actor, orgID int64, c SettingsChange) (Settings, error) {
	row := &messageSettingsRow{OrganisationID: orgID}
	if err := tx.NewSelect().Model(row).WherePK().Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Settings{}, fmt.Errorf("load message settings: %w", err)
	}
	before := row.effective()
	c.apply(row)
	if _, err := tx.NewInsert().Model(row).On("CONFLICT (organisation_id) DO UPDATE").
		Set("unpaid_reminder_days = EXCLUDED.unpaid_reminder_days, expiry_reminder_days = EXCLUDED.expiry_reminder_days").
		Set("resume_after_hours = EXCLUDED.resume_after_hours, renewal_lead_days = EXCLUDED.renewal_lead_days").
		Set("sender_name = EXCLUDED.sender_name, reply_to = EXCLUDED.reply_to").Exec(ctx); err != nil {
		return Settings{}, fmt.Errorf("store message settings: %w", err)
	}
	out := row.effective()
	if actor == nil {
		return out, nil
	}
	return out, s.AppendAudit(ctx, tx, *actor, engine.AuditEntry{OrganisationID: orgID, Action: "message_settings.update",
		TargetType: "organisation", TargetID: fmt.Sprint(orgID), Before: messageSettingsAuditView(before), After: messageSettingsAuditView(out)})
}

// Settings loads an organisation's effective message settings, in
// the caller's organisation scope.
func (s *Service) Settings(ctx context.Context, orgID int64) (_ Settings, err error) {
	if !engine.InScope(ctx, orgID) {
		return Settings{}, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	return SettingsOf(ctx, s.DB(), orgID)
}

// DefaultRenewalLeadDays is how long before the ending period's last day
// the prompts start when the next period opens early (unless the
// organisation chose otherwise): a next season that
// opens three months ahead does not ask members to renew three months
// before their membership ends. A next period opening later prompts on
// the day it opens.
const DefaultRenewalLeadDays = 30

// SuspendAfter is how long a RUNNING registration may sit without
// activity (its last write or, at a coarser grain, page view: see
// TouchActivity) before it is SUSPENDED, unless its organisation chose
// otherwise (Settings.ResumeAfter).
const SuspendAfter = 24 * time.Hour
