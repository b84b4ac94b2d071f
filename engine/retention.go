package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/jobs"
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

// retentionRow is the stored row; nil columns take the default.
type retentionRow struct {
	bun.BaseModel  `bun:"table:organisation_retention_settings"`
	OrganisationID int64 `bun:"organisation_id,pk"`
	PersonSeasons  *int  `bun:"person_seasons"`
	AnswerMonths   *int  `bun:"answer_months"`
	MessageDays    *int  `bun:"message_days"`
	AccessLogDays  *int  `bun:"access_log_days"`
}

func (r *retentionRow) effective() RetentionSettings {
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
	row := new(retentionRow)
	err := db.NewSelect().Model(row).Where("organisation_id = ?", orgID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		row = nil
	} else if err != nil {
		return RetentionSettings{}, fmt.Errorf("load retention settings: %w", err)
	}
	return row.effective(), nil
}

// RetentionSettings loads an organisation's effective retention settings,
// in the caller's organisation scope.
func (s *Service) RetentionSettings(ctx context.Context, orgID int64) (_ RetentionSettings, err error) {
	defer ClassifyUnavailable(&err)
	if !inScope(ctx, orgID) {
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
	defer ClassifyUnavailable(&err)
	if !inScope(ctx, orgID) {
		return RetentionSettings{}, Errorf(CodeNotFound, "organisation not found")
	}
	if err := CheckRetentionSettings(c); err != nil {
		return RetentionSettings{}, err
	}
	var out RetentionSettings
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := loadOrganisation(ctx, tx, orgID); err != nil {
			return err
		}
		out, err = s.storeRetentionSettings(ctx, tx, &actor, orgID, c)
		return err
	})
	return out, err
}

// storeRetentionSettings applies a checked change inside tx (also
// updateOrganisation's, when one request changes both), audited when
// actor is set.
func (s *Service) storeRetentionSettings(ctx context.Context, tx bun.Tx, actor *Actor, orgID int64, c RetentionSettingsChange) (RetentionSettings, error) {
	row := &retentionRow{OrganisationID: orgID}
	if err := tx.NewSelect().Model(row).WherePK().Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return RetentionSettings{}, fmt.Errorf("load retention settings: %w", err)
	}
	before := row.effective()
	for _, x := range []struct {
		v   *int
		dst **int
	}{{c.PersonSeasons, &row.PersonSeasons}, {c.AnswerMonths, &row.AnswerMonths}, {c.MessageDays, &row.MessageDays}, {c.AccessLogDays, &row.AccessLogDays}} {
		if x.v != nil {
			*x.dst = nil
			if *x.v != 0 {
				*x.dst = ptr(*x.v)
			}
		}
	}
	if _, err := tx.NewInsert().Model(row).On("CONFLICT (organisation_id) DO UPDATE").
		Set("person_seasons = EXCLUDED.person_seasons, answer_months = EXCLUDED.answer_months").
		Set("message_days = EXCLUDED.message_days, access_log_days = EXCLUDED.access_log_days").Exec(ctx); err != nil {
		return RetentionSettings{}, fmt.Errorf("store retention settings: %w", err)
	}
	out := row.effective()
	if actor == nil {
		return out, nil
	}
	return out, s.appendAudit(ctx, tx, *actor, AuditEntry{OrganisationID: orgID, Action: "retention_settings.update",
		TargetType: "organisation", TargetID: fmt.Sprint(orgID), Before: retentionAuditView(before), After: retentionAuditView(out)})
}

// KindApplyRetention is the daily job that applies every organisation's
// retention settings.
const KindApplyRetention = "data.retention"

// RetentionResult counts what a run of ApplyRetention did.
type RetentionResult struct {
	Persons, Answers, Messages, AccessLog int
}

// Total is everything the run changed.
func (r RetentionResult) Total() int { return r.Persons + r.Answers + r.Messages + r.AccessLog }

// ApplyRetention removes, for every organisation, what is past its
// retention at now: persons without a membership for its seasons (erased
// as on request: ErasePerson), the
// answers of registrations archived longer than its months, the bodies
// of messages sent longer than its days ago, access log rows older than
// its days. Every change is conditional on not being made yet, so a run
// is idempotent and two runs at once change each row once; each person
// is one transaction.
func (s *Service) ApplyRetention(ctx context.Context, now time.Time) (RetentionResult, error) {
	now, db := now.UTC(), s.db
	var res RetentionResult
	orgs, err := listOrganisations(ctx, db)
	if err != nil {
		return res, err
	}
	one, scoped := OrganisationOf(ctx)
	scoped = scoped && one != 0
	for _, org := range orgs {
		if scoped && org.ID != one {
			continue // a run for one organisation (portal jobs run --org)
		}
		set, err := RetentionSettingsOf(ctx, db, org.ID)
		if err != nil {
			return res, err
		}
		n, err := s.eraseLapsedPersons(ctx, org.ID, set.PersonSeasons, now)
		res.Persons += n
		if err != nil {
			return res, err
		}
		if n, err = removeArchivedAnswers(ctx, db, org.ID, now.AddDate(0, -set.AnswerMonths, 0)); err != nil {
			return res, err
		}
		res.Answers += n
		if n, err = pruneAccessLog(ctx, db, org.ID, now.AddDate(0, 0, -set.AccessLogDays)); err != nil {
			return res, err
		}
		res.AccessLog += n
	}
	if scoped {
		// The outbox's messages belong to no organisation's column: their
		// content goes on the portal-wide runs only.
		return res, nil
	}
	n, err := removeMessageBodies(ctx, db, now)
	res.Messages += n
	return res, err
}

// ScheduleRetention runs ApplyRetention daily on r (one run per day in
// the cluster: the schedule's job is enqueued once per period).
func (s *Service) ScheduleRetention(r *jobs.Runner, now func() time.Time, log *slog.Logger) {
	r.Every(KindApplyRetention, 24*time.Hour)
	r.Handle(KindApplyRetention, func(ctx context.Context, j *jobs.Job) error {
		ctx = jobScope(ctx, j)
		res, err := s.ApplyRetention(ctx, now())
		if res.Total() > 0 {
			log.InfoContext(ctx, "retention applied", "persons", res.Persons, "answers", res.Answers, "messages", res.Messages, "access log", res.AccessLog)
		}
		return err
	})
}

// lapsedPersons are the persons of an organisation, not erased yet,
// without a membership for seasons whole seasons at now: at least that
// many of its periods began after the end of the person's last period
// with a membership that is not cancelled (or after the person was
// recorded, for one never a member) and have ended. A person on an unpaid
// order is never lapsed.
func lapsedPersons(ctx context.Context, db bun.IDB, orgID int64, seasons int, now time.Time) ([]int64, error) {
	var periods []MembershipPeriod
	if err := db.NewSelect().Model(&periods).Where("organisation_id = ?", orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	ended := map[int64]MembershipPeriod{}
	for _, p := range periods {
		ended[p.ID] = p
	}
	var persons []Person
	if err := db.NewSelect().Model(&persons).Column("id", "created_at").Where("organisation_id = ? AND erased_at IS NULL", orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons: %w", err)
	}
	var held []struct {
		PersonID int64
		PeriodID int64
	}
	if err := db.NewSelect().TableExpr("memberships AS m").Join("JOIN persons AS p ON p.id = m.person_id").
		ColumnExpr("m.person_id, m.period_id").Where("p.organisation_id = ? AND m.status <> ?", orgID, MembershipCancelled).Scan(ctx, &held); err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	var owing []int64
	if err := db.NewSelect().TableExpr("order_lines AS l").Join("JOIN orders AS o ON o.id = l.order_id").ColumnExpr("DISTINCT l.person_id").
		Where("o.organisation_id = ? AND o.status = ? AND l.person_id IS NOT NULL", orgID, OrderUnpaid).Scan(ctx, &owing); err != nil {
		return nil, fmt.Errorf("load unpaid orders: %w", err)
	}
	unpaid := map[int64]bool{}
	for _, id := range owing {
		unpaid[id] = true
	}
	since := map[int64]time.Time{} // the end of the last period with a membership
	for _, h := range held {
		if p, ok := ended[h.PeriodID]; ok && p.EndDate.After(since[h.PersonID]) {
			since[h.PersonID] = p.EndDate
		}
	}
	var out []int64
	for _, person := range persons {
		if unpaid[person.ID] {
			continue
		}
		from, member := since[person.ID]
		if !member {
			from = person.CreatedAt
		}
		n := 0
		for _, p := range periods {
			if p.StartDate.After(from) && p.EndDate.Before(now) {
				n++
			}
		}
		if n >= seasons {
			out = append(out, person.ID)
		}
	}
	return out, nil
}

// maxErasuresPerRun bounds the persons one run erases per organisation,
// so that a first run over years of former members stays well inside
// the job's lease; the rest follow on the next days.
const maxErasuresPerRun = 500

// RetentionActor is how the audit log names the retention job's erasures.
var RetentionActor = Actor{Name: "retention"}

// eraseLapsedPersons erases the lapsedPersons (ErasePerson: the same
// erasure as on request, each its own transaction and audit entry); a
// person the erasure refuses (an active membership or an open payment
// that came meanwhile) or finds erased already is left for now. It
// returns how many it erased.
func (s *Service) eraseLapsedPersons(ctx context.Context, orgID int64, seasons int, now time.Time) (int, error) {
	ids, err := lapsedPersons(ctx, s.db, orgID, seasons, now)
	if err != nil {
		return 0, err
	}
	ids = ids[:min(len(ids), maxErasuresPerRun)]
	n := 0
	for _, id := range ids {
		_, err := s.ErasePerson(ctx, RetentionActor, orgID, id, ErasureOptions{})
		switch {
		case ErrorCode(err) == CodeConflict:
			continue
		case err != nil:
			return n, err
		}
		n++
	}
	return n, nil
}

// removeArchivedAnswers drops the answers of an organisation's
// registrations archived before cutoff: the archive keeps its summary
// and counts, and its mode becomes "remove". It returns how many.
func removeArchivedAnswers(ctx context.Context, db bun.IDB, orgID int64, cutoff time.Time) (int, error) {
	res, err := db.NewUpdate().Model((*archiveRow)(nil)).Set("data = NULL, mode = ?", string(ArchiveRemove)).
		Where("data IS NOT NULL AND archived_at < ?", cutoff.UTC()).
		Where("instance_id IN (SELECT id FROM process_instances WHERE organisation_id = ?)", orgID).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("remove archived answers: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// removeMessageBodies empties the payload of messages sent longer ago
// than their organisation's message days (messageOrganisation; the
// default for a message about no organisation). Rows are read in pages
// by id from the oldest sent before the shortest retention of all.
func removeMessageBodies(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	var rows []retentionRow
	if err := db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return 0, fmt.Errorf("load retention settings: %w", err)
	}
	days := map[int64]int{}
	shortest := DefaultMessageDays
	for i := range rows {
		d := rows[i].effective().MessageDays
		days[rows[i].OrganisationID] = d
		shortest = min(shortest, d)
	}
	daysOf := func(orgID int64) int {
		if d, ok := days[orgID]; ok {
			return d
		}
		return DefaultMessageDays
	}
	n := 0
	var after int64
	for {
		var page []OutboxMessage
		if err := db.NewSelect().Model(&page).Column("id", "payload", "sent_at").
			Where("id > ? AND sent_at IS NOT NULL AND sent_at < ? AND payload <> '{}'", after, now.AddDate(0, 0, -shortest)).
			OrderExpr("id").Limit(500).Scan(ctx); err != nil {
			return n, fmt.Errorf("find message bodies: %w", err)
		}
		if len(page) == 0 {
			return n, nil
		}
		for _, m := range page {
			after = m.ID
			org, err := messageOrganisation(ctx, db, m.Payload)
			if err != nil {
				return n, err
			}
			if !m.SentAt.Before(now.AddDate(0, 0, -daysOf(org))) {
				continue
			}
			res, err := db.NewUpdate().Model((*OutboxMessage)(nil)).Set("payload = '{}'").Where("id = ? AND payload <> '{}'", m.ID).Exec(ctx)
			if err != nil {
				return n, fmt.Errorf("remove message body %d: %w", m.ID, err)
			}
			if k, _ := res.RowsAffected(); k == 1 {
				n++
			}
		}
	}
}

// messageOrganisation is the organisation an outbox message's payload is
// about (its organisation, order, invitation or period); 0 when none.
func messageOrganisation(ctx context.Context, db bun.IDB, payload string) (int64, error) {
	var owner messageOwner
	if json.Unmarshal([]byte(payload), &owner) != nil {
		return 0, nil
	}
	var q *bun.SelectQuery
	switch {
	case owner.OrganisationID != 0:
		return owner.OrganisationID, nil
	case owner.OrderID != 0:
		q = db.NewSelect().Model((*Order)(nil)).Column("organisation_id").Where("id = ?", owner.OrderID)
	case owner.InvitationID != 0:
		q = db.NewSelect().Model((*Invitation)(nil)).Column("organisation_id").Where("id = ?", owner.InvitationID)
	case owner.PeriodID != 0:
		q = db.NewSelect().Model((*MembershipPeriod)(nil)).Column("organisation_id").Where("id = ?", owner.PeriodID)
	default:
		return 0, nil
	}
	var orgID int64
	if err := q.Scan(ctx, &orgID); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("find the organisation of a message: %w", err)
	}
	return orgID, nil
}
