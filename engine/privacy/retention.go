package privacy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/registration"
	"portal/engine/staff"
)

// The retention job (issue 30): every day, for each organisation, what is
// past its retention settings (engine/retention_settings.go) goes: lapsed persons
// are erased, archived answers, sent message bodies and old access-log
// entries removed.

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
	now, db := now.UTC(), s.DB()
	var res RetentionResult
	orgs, err := engine.ListOrganisations(ctx, db)
	if err != nil {
		return res, err
	}
	one, scoped := engine.OrganisationOf(ctx)
	scoped = scoped && one != 0
	for _, org := range orgs {
		if scoped && org.ID != one {
			continue // a run for one organisation (portal jobs run --org)
		}
		set, err := engine.RetentionSettingsOf(ctx, db, org.ID)
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
	r.Every(engine.KindApplyRetention, 24*time.Hour)
	r.Handle(engine.KindApplyRetention, func(ctx context.Context, j *jobs.Job) error {
		ctx = engine.JobScope(ctx, j)
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
	var periods []engine.MembershipPeriod
	if err := db.NewSelect().Model(&periods).Where("organisation_id = ?", orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	ended := map[int64]engine.MembershipPeriod{}
	for _, p := range periods {
		ended[p.ID] = p
	}
	var persons []engine.Person
	if err := db.NewSelect().Model(&persons).Column("id", "created_at").Where("organisation_id = ? AND erased_at IS NULL", orgID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load persons: %w", err)
	}
	var held []struct {
		PersonID int64
		PeriodID int64
	}
	if err := db.NewSelect().TableExpr("memberships AS m").Join("JOIN persons AS p ON p.id = m.person_id").
		ColumnExpr("m.person_id, m.period_id").Where("p.organisation_id = ? AND m.status <> ?", orgID, engine.MembershipCancelled).Scan(ctx, &held); err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	var owing []int64
	if err := db.NewSelect().TableExpr("order_lines AS l").Join("JOIN orders AS o ON o.id = l.order_id").ColumnExpr("DISTINCT l.person_id").
		Where("o.organisation_id = ? AND o.status = ? AND l.person_id IS NOT NULL", orgID, engine.OrderUnpaid).Scan(ctx, &owing); err != nil {
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
var RetentionActor = engine.Actor{Name: "retention"}

// eraseLapsedPersons erases the lapsedPersons (ErasePerson: the same
// erasure as on request, each its own transaction and audit entry); a
// person the erasure refuses (an active membership or an open payment
// that came meanwhile) or finds erased already is left for now. It
// returns how many it erased.
func (s *Service) eraseLapsedPersons(ctx context.Context, orgID int64, seasons int, now time.Time) (int, error) {
	ids, err := lapsedPersons(ctx, s.DB(), orgID, seasons, now)
	if err != nil {
		return 0, err
	}
	ids = ids[:min(len(ids), maxErasuresPerRun)]
	n := 0
	for _, id := range ids {
		_, err := s.ErasePerson(ctx, RetentionActor, orgID, id, ErasureOptions{})
		switch {
		case engine.ErrorCode(err) == engine.CodeConflict:
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
	res, err := db.NewUpdate().Model((*archiveRow)(nil)).Set("data = NULL, mode = ?", string(registration.ArchiveRemove)).
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
	var rows []engine.RetentionRow
	if err := db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return 0, fmt.Errorf("load retention settings: %w", err)
	}
	days := map[int64]int{}
	shortest := engine.DefaultMessageDays
	for i := range rows {
		d := rows[i].Effective().MessageDays
		days[rows[i].OrganisationID] = d
		shortest = min(shortest, d)
	}
	daysOf := func(orgID int64) int {
		if d, ok := days[orgID]; ok {
			return d
		}
		return engine.DefaultMessageDays
	}
	n := 0
	var after int64
	for {
		var page []engine.OutboxMessage
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
			res, err := db.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("payload = '{}'").Where("id = ? AND payload <> '{}'", m.ID).Exec(ctx)
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
	var owner staff.MessageOwner
	if json.Unmarshal([]byte(payload), &owner) != nil {
		return 0, nil
	}
	var q *bun.SelectQuery
	switch {
	case owner.OrganisationID != 0:
		return owner.OrganisationID, nil
	case owner.OrderID != 0:
		q = db.NewSelect().Model((*engine.Order)(nil)).Column("organisation_id").Where("id = ?", owner.OrderID)
	case owner.InvitationID != 0:
		q = db.NewSelect().Model((*invitation.Invitation)(nil)).Column("organisation_id").Where("id = ?", owner.InvitationID)
	case owner.PeriodID != 0:
		q = db.NewSelect().Model((*engine.MembershipPeriod)(nil)).Column("organisation_id").Where("id = ?", owner.PeriodID)
	default:
		return 0, nil
	}
	var orgID int64
	if err := q.Scan(ctx, &orgID); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("find the organisation of a message: %w", err)
	}
	return orgID, nil
}
