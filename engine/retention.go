package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
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
	// they were recorded, and have ended) is anonymised.
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
	defer classifyUnavailable(&err)
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
	defer classifyUnavailable(&err)
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
		row := &retentionRow{OrganisationID: orgID}
		if err := tx.NewSelect().Model(row).WherePK().Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("load retention settings: %w", err)
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
			return fmt.Errorf("store retention settings: %w", err)
		}
		out = row.effective()
		return s.appendAudit(ctx, tx, actor, AuditEntry{OrganisationID: orgID, Action: "retention_settings.update",
			TargetType: "organisation", TargetID: fmt.Sprint(orgID), Before: retentionAuditView(before), After: retentionAuditView(out)})
	})
	return out, err
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

// ApplyRetention anonymises, for every organisation, what is past its
// retention at now: persons without a membership for its seasons, the
// answers of registrations archived longer than its months, the bodies
// of messages sent longer than its days ago, access log rows older than
// its days. Every change is conditional on not being made yet, so a run
// is idempotent and two runs at once change each row once; each person
// is one transaction.
func ApplyRetention(ctx context.Context, db *bun.DB, now time.Time) (RetentionResult, error) {
	now = now.UTC()
	var res RetentionResult
	orgs, err := listOrganisations(ctx, db)
	if err != nil {
		return res, err
	}
	for _, org := range orgs {
		set, err := RetentionSettingsOf(ctx, db, org.ID)
		if err != nil {
			return res, err
		}
		n, err := anonymiseLapsedPersons(ctx, db, org.ID, set.PersonSeasons, now)
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
	n, err := removeMessageBodies(ctx, db, now)
	res.Messages += n
	return res, err
}

// ScheduleRetention runs ApplyRetention daily on r (one run per day in
// the cluster: the schedule's job is enqueued once per period).
func ScheduleRetention(r *jobs.Runner, db *bun.DB, now func() time.Time, log *slog.Logger) {
	r.Every(KindApplyRetention, 24*time.Hour)
	r.Handle(KindApplyRetention, func(ctx context.Context, _ *jobs.Job) error {
		res, err := ApplyRetention(ctx, db, now())
		if res.Total() > 0 {
			log.InfoContext(ctx, "retention applied", "persons", res.Persons, "answers", res.Answers, "messages", res.Messages, "access log", res.AccessLog)
		}
		return err
	})
}

// lapsedPersons are the persons of an organisation, not anonymised yet,
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
	if err := db.NewSelect().Model(&persons).Column("id", "created_at").Where("organisation_id = ? AND anonymised_at IS NULL", orgID).Scan(ctx); err != nil {
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

// anonymiseLapsedPersons anonymises the lapsedPersons, one transaction
// each; it returns how many it anonymised.
func anonymiseLapsedPersons(ctx context.Context, db *bun.DB, orgID int64, seasons int, now time.Time) (int, error) {
	ids, err := lapsedPersons(ctx, db, orgID, seasons, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		var done bool
		err := inTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			var err error
			done, err = AnonymisePerson(ctx, tx, orgID, id, now)
			return err
		})
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// AnonymisedName is the first name an anonymised person keeps.
const AnonymisedName = "Anonymised"

// anonymisedBirth is the date of birth an anonymised person keeps.
var anonymisedBirth = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// AnonymisePerson removes a person's personal data in the caller's
// transaction, keeping the records the books need: the person row stays
// (memberships and order lines point at it) with its name, e-mail, date of
// birth and external id replaced; their answers (live and archived),
// consents and household links are deleted; their name is replaced in
// their order lines' descriptions; the messages to their address lose
// their body and address and their opt-outs go, unless another person of
// the organisation still has that address. The amounts, references and
// statuses of orders and payments stay. It reports false when the person
// was anonymised already (nothing changed), so that it is idempotent.
func AnonymisePerson(ctx context.Context, tx bun.IDB, orgID, personID int64, now time.Time) (bool, error) {
	p := new(Person)
	if err := tx.NewSelect().Model(p).Where("id = ? AND organisation_id = ?", personID, orgID).Scan(ctx); err != nil {
		return false, notFoundOr(err, "person")
	}
	res, err := tx.NewUpdate().Model((*Person)(nil)).
		Set("first_name = ?, last_name = '', email = '', date_of_birth = ?, external_id = NULL, anonymised_at = ?", AnonymisedName, anonymisedBirth, now.UTC()).
		Where("id = ? AND anonymised_at IS NULL", personID).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("anonymise person %d: %w", personID, err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		return false, nil
	}
	if err := removeArchivedAnswersOf(ctx, tx, orgID, personID); err != nil {
		return false, err
	}
	for _, q := range []*bun.DeleteQuery{
		tx.NewDelete().Model((*ProcessData)(nil)).Where("person_id = ?", personID),
		tx.NewDelete().Model((*ConsentRecord)(nil)).Where("person_id = ?", personID),
		tx.NewDelete().Model((*UserPerson)(nil)).Where("person_id = ?", personID),
	} {
		if _, err := q.Exec(ctx); err != nil {
			return false, fmt.Errorf("anonymise person %d: %w", personID, err)
		}
	}
	if name := strings.TrimSpace(p.FirstName + " " + p.LastName); name != "" {
		if _, err := tx.NewUpdate().Model((*OrderLine)(nil)).Set("description = REPLACE(description, ?, ?)", name, AnonymisedName).
			Where("person_id = ?", personID).Exec(ctx); err != nil {
			return false, fmt.Errorf("anonymise order lines of %d: %w", personID, err)
		}
	}
	if addr := strings.ToLower(strings.TrimSpace(p.Email)); addr != "" {
		shared, err := tx.NewSelect().Model((*Person)(nil)).Where("organisation_id = ? AND lower(email) = ? AND id <> ?", orgID, addr, personID).Exists(ctx)
		if err != nil {
			return false, fmt.Errorf("anonymise person %d: %w", personID, err)
		}
		if !shared {
			if _, err := tx.NewUpdate().Model((*OutboxMessage)(nil)).Set("payload = '{}', recipient = ''").
				Where("lower(recipient) = ?", addr).Exec(ctx); err != nil {
				return false, fmt.Errorf("anonymise messages of %d: %w", personID, err)
			}
			if _, err := tx.NewDelete().TableExpr("message_opt_outs").Where("organisation_id = ? AND address = ?", orgID, addr).Exec(ctx); err != nil {
				return false, fmt.Errorf("anonymise opt-outs of %d: %w", personID, err)
			}
		}
	}
	return true, nil
}

// archiveRow is a process_archives row as retention reads and rewrites it.
type archiveRow struct {
	bun.BaseModel `bun:"table:process_archives,alias:pa"`
	InstanceID    int64   `bun:"instance_id,pk"`
	Data          *string `bun:"data"`
}

// removeArchivedAnswersOf deletes a person's answers from the archives
// of their organisation's registrations.
func removeArchivedAnswersOf(ctx context.Context, tx bun.IDB, orgID, personID int64) error {
	var rows []archiveRow
	if err := tx.NewSelect().Model(&rows).Join("JOIN process_instances AS i ON i.id = pa.instance_id").
		Where("i.organisation_id = ? AND pa.data IS NOT NULL", orgID).
		Where("i.user_key IN (SELECT user_key FROM user_persons WHERE person_id = ?) OR i.id IN (SELECT process_instance_id FROM memberships WHERE person_id = ?)", personID, personID).
		Scan(ctx); err != nil {
		return fmt.Errorf("load archives of %d: %w", personID, err)
	}
	for _, r := range rows {
		var answers []archivedAnswer
		if err := json.Unmarshal([]byte(*r.Data), &answers); err != nil {
			return fmt.Errorf("archive of %d does not parse: %w", r.InstanceID, err)
		}
		kept := answers[:0]
		for _, a := range answers {
			if a.PersonID == nil || *a.PersonID != personID {
				kept = append(kept, a)
			}
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*archiveRow)(nil)).Set("data = ?", string(b)).Where("instance_id = ?", r.InstanceID).Exec(ctx); err != nil {
			return fmt.Errorf("rewrite archive of %d: %w", r.InstanceID, err)
		}
	}
	return nil
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
