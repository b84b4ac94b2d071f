package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// Retention per organisation (issue 30): how long the portal keeps
// personal data it no longer needs, and the daily job that anonymises
// what is past it. Each setting left unset takes the portal's default
// (organisation_retention_settings holds only what the organisation
// chose). docs/DATA-PROTECTION.md, "Retention".

// Defaults of the retention settings.
const (
	// DefaultPersonSeasons: a person without a membership for three whole
	// seasons (periods that began after their last membership's, or after
	// they were recorded, and have ended) is erased.
	DefaultPersonSeasons = 3
	// DefaultAnswerMonths: an archived registration's answers go a year
	// after the archive (itself 90 days after the registration ended):
	// the season they were given for is over by then.
	DefaultAnswerMonths = 12
	// DefaultMessageDays: a sent message's body (its payload: what it was
	// about) goes after 90 days; its kind, address and dates stay.
	DefaultMessageDays = 90
	// DefaultAccessLogDays: access log rows are kept two years.
	DefaultAccessLogDays = 730
)

// Bounds of the retention settings.
const (
	maxPersonSeasons = 20
	maxAnswerMonths  = 240
	maxMessageDays   = 3650
	maxAccessLogDays = 3650
)

// RetentionSettings are an organisation's effective retention settings.
type RetentionSettings struct {
	PersonSeasons int
	AnswerMonths  int
	MessageDays   int
	AccessLogDays int
}

// DefaultRetentionSettings are the settings of an organisation that chose none.
func DefaultRetentionSettings() RetentionSettings {
	return RetentionSettings{PersonSeasons: DefaultPersonSeasons, AnswerMonths: DefaultAnswerMonths,
		MessageDays: DefaultMessageDays, AccessLogDays: DefaultAccessLogDays}
}

// RetentionRow is the stored row; nil columns take the default.
type RetentionRow struct {
	bun.BaseModel  `bun:"table:organisation_retention_settings"`
	OrganisationID int64 `bun:"organisation_id,pk"`
	PersonSeasons  *int  `bun:"person_seasons"`
	AnswerMonths   *int  `bun:"answer_months"`
	MessageDays    *int  `bun:"message_days"`
	AccessLogDays  *int  `bun:"access_log_days"`
}

func (r *RetentionRow) Effective() RetentionSettings {
	s := DefaultRetentionSettings()
	if r == nil {
		return s
	}
	for _, x := range []struct {
		v   *int
		dst *int
	}{{r.PersonSeasons, &s.PersonSeasons}, {r.AnswerMonths, &s.AnswerMonths}, {r.MessageDays, &s.MessageDays}, {r.AccessLogDays, &s.AccessLogDays}} {
		if x.v != nil {
			*x.dst = *x.v
		}
	}
	return s
}

// RetentionSettingsOf loads an organisation's effective retention settings.
func RetentionSettingsOf(ctx context.Context, db bun.IDB, orgID int64) (RetentionSettings, error) {
	row := new(RetentionRow)
	err := db.NewSelect().Model(row).Where("organisation_id = ?", orgID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		row = nil
	} else if err != nil {
		return RetentionSettings{}, fmt.Errorf("load retention settings: %w", err)
	}
	return row.Effective(), nil
}

// RetentionSettings loads an organisation's effective retention settings,
// in the caller's organisation scope.
func (s *Service) RetentionSettings(ctx context.Context, orgID int64) (_ RetentionSettings, err error) {
	if !InScope(ctx, orgID) {
		return RetentionSettings{}, Errorf(CodeNotFound, "organisation not found")
	}
	return RetentionSettingsOf(ctx, s.db, orgID)
}

// RetentionSettingsChange changes retention settings: nil fields stay; 0
// returns a setting to the default.
type RetentionSettingsChange struct {
	PersonSeasons *int
	AnswerMonths  *int
	MessageDays   *int
	AccessLogDays *int
}

func (c *RetentionSettingsChange) fields() []struct {
	name     string
	v        *int
	min, max int
} {
	return []struct {
		name     string
		v        *int
		min, max int
	}{{"personSeasons", c.PersonSeasons, 1, maxPersonSeasons}, {"answerMonths", c.AnswerMonths, 1, maxAnswerMonths},
		{"messageDays", c.MessageDays, 1, maxMessageDays}, {"accessLogDays", c.AccessLogDays, 30, maxAccessLogDays}}
}

// CheckRetentionSettings validates a change without applying it; its
// fields are named as in the admin API ("retention.messageDays").
func CheckRetentionSettings(c RetentionSettingsChange) error {
	var fields []FieldError
	for _, x := range c.fields() {
		if x.v != nil && *x.v != 0 && (*x.v < x.min || *x.v > x.max) {
			fields = append(fields, FieldError{Field: "retention." + x.name, Message: fmt.Sprintf("must be %d to %d (0: the default)", x.min, x.max)})
		}
	}
	if len(fields) > 0 {
		return &Error{Code: CodeValidation, Message: "Some settings are not valid.", Fields: fields}
	}
	return nil
}

// retentionAuditView is what the audit log keeps of retention settings.
func retentionAuditView(r RetentionSettings) map[string]any {
	return map[string]any{"personSeasons": r.PersonSeasons, "answerMonths": r.AnswerMonths, "messageDays": r.MessageDays, "accessLogDays": r.AccessLogDays}
}

// StaffUpdateRetentionSettings applies a change to an organisation's
// retention settings in one transaction, audited; an invalid field
// changes nothing.
func (s *Service) StaffUpdateRetentionSettings(ctx context.Context, actor Actor, orgID int64, c RetentionSettingsChange) (_ RetentionSettings, err error) {
	if !InScope(ctx, orgID) {
		return RetentionSettings{}, Errorf(CodeNotFound, "organisation not found")
	}
	if err := CheckRetentionSettings(c); err != nil {
		return RetentionSettings{}, err
	}
	var out RetentionSettings
	err = InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := LoadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		out, err = s.StoreRetentionSettings(ctx, tx, &actor, orgID, c)
		return err
	})
	return out, err
}

// StoreRetentionSettings applies a checked change inside tx (also
// updateOrganisation's, when one request changes both), audited when
// actor is set.
func (s *Service) StoreRetentionSettings(ctx context.Context, tx bun.Tx, actor *Actor, orgID int64, c RetentionSettingsChange) (RetentionSettings, error) {
	row := &RetentionRow{OrganisationID: orgID}
	if err := tx.NewSelect().Model(row).WherePK().Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return RetentionSettings{}, fmt.Errorf("load retention settings: %w", err)
	}
	before := row.Effective()
	for _, x := range []struct {
		v   *int
		dst **int
	}{{c.PersonSeasons, &row.PersonSeasons}, {c.AnswerMonths, &row.AnswerMonths}, {c.MessageDays, &row.MessageDays}, {c.AccessLogDays, &row.AccessLogDays}} {
		if x.v != nil {
			*x.dst = nil
			if *x.v != 0 {
				*x.dst = new(*x.v)
			}
		}
	}
	if _, err := tx.NewInsert().Model(row).On("CONFLICT (organisation_id) DO UPDATE").
		Set("person_seasons = EXCLUDED.person_seasons, answer_months = EXCLUDED.answer_months").
		Set("message_days = EXCLUDED.message_days, access_log_days = EXCLUDED.access_log_days").Exec(ctx); err != nil {
		return RetentionSettings{}, fmt.Errorf("store retention settings: %w", err)
	}
	out := row.Effective()
	if actor == nil {
		return out, nil
	}
	return out, s.AppendAudit(ctx, tx, *actor, AuditEntry{OrganisationID: orgID, Action: "retention_settings.update",
		TargetType: "organisation", TargetID: fmt.Sprint(orgID), Before: retentionAuditView(before), After: retentionAuditView(out)})
}
