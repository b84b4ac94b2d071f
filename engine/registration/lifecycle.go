package registration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/jobs"
	"portal/engine/message"
)

// Lifecycle of registrations over time: suspension of abandoned ones and
// the archive of finished ones. Both run as daily or hourly jobs on every
// instance (engine/jobs schedules, one run per period) and are idempotent:
// a second run finds nothing left to do.

// ArchiveAfter is how long after it ended a finished registration keeps
// its answers (the spec's limit).
const ArchiveAfter = 90 * 24 * time.Hour

// KindResumeLink is the outbox message (and job) kind of the e-mail with
// the link back to a suspended registration.
const KindResumeLink engine.MessageKind = "resume_link"

// ResumeLinkPayload is the outbox payload of a resume-link message.
type ResumeLinkPayload struct {
	InstanceID int64   `json:"instanceId"`
	PeriodID   int64   `json:"periodId"`
	UserKey    string  `json:"userKey"`
	PersonIDs  []int64 `json:"personIds"`
}

// SuspendIdle moves RUNNING registrations without activity for their
// organisation's MessageSettings.ResumeAfter to SUSPENDED and queues a resume-link message for each,
// in one transaction. The message's key names the instance and its last
// activity, so a re-run sends nothing twice while a registration that is
// resumed and left alone again gets a new message. It returns how many it
// suspended.
func SuspendIdle(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
	now = now.UTC()
	settings, err := message.AllMessageSettings(ctx, db)
	if err != nil {
		return 0, err
	}
	shortest := message.SuspendAfter
	for _, s := range settings {
		shortest = min(shortest, s.ResumeAfter)
	}
	n := 0
	err = engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		var idle []engine.ProcessInstance
		q := engine.ScopeOrg(ctx, tx.NewSelect().Model(&idle).Where("status = ? AND updated_at < ?", engine.StateRunning, now.Add(-shortest)).
			OrderExpr("id").Limit(500), "organisation_id")
		if tx.Dialect().Name() == dialect.PG {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil {
			return fmt.Errorf("find idle registrations: %w", err)
		}
		for i := range idle {
			inst := &idle[i]
			lastActive := inst.UpdatedAt
			if now.Sub(lastActive) < settings.Of(inst.OrganisationID).ResumeAfter {
				continue // its organisation waits longer
			}
			res, err := tx.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", engine.StateSuspended).Set("version = version + 1").
				Where("id = ? AND version = ? AND status = ?", inst.ID, inst.Version, engine.StateRunning).Exec(ctx)
			if err != nil {
				return fmt.Errorf("suspend registration %d: %w", inst.ID, err)
			}
			if k, _ := res.RowsAffected(); k != 1 {
				continue // changed meanwhile: it is active again
			}
			payload, err := json.Marshal(ResumeLinkPayload{InstanceID: inst.ID, PeriodID: inst.RelatedEntityID, UserKey: inst.UserKey, PersonIDs: inst.SelectedPersons})
			if err != nil {
				return err
			}
			msg := &engine.OutboxMessage{Kind: KindResumeLink, DedupKey: fmt.Sprintf("%s:instance:%d:%d", KindResumeLink, inst.ID, lastActive.Unix()),
				Payload: string(payload), CreatedAt: now}
			if err := store.QueueMessage(ctx, tx, msg); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// ResumeSuspended moves a SUSPENDED registration back to RUNNING when its
// member loads it (Resume does the same for an explicit resume).
func ResumeSuspended(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, now time.Time) error {
	if inst.Status != engine.StateSuspended {
		return nil
	}
	res, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?", engine.StateRunning).Set("version = version + 1").Set("updated_at = ?", now.UTC()).
		Where("id = ? AND status = ?", inst.ID, engine.StateSuspended).Exec(ctx)
	if err != nil {
		return fmt.Errorf("resume registration %d: %w", inst.ID, err)
	}
	if k, _ := res.RowsAffected(); k == 1 {
		inst.Status, inst.Version, inst.UpdatedAt = engine.StateRunning, inst.Version+1, now.UTC()
	}
	return nil
}

// activityGrain is how often at most a member's page reads move their
// RUNNING registration's last activity (updated_at), which decides its
// suspension: reading counts as activity, but a write on every request
// would put a busy page's load on the database for a timer measured in
// hours.
const activityGrain = 5 * time.Minute

// TouchActivity records a read of a RUNNING registration as activity when
// its last activity is older than activityGrain. The condition in the
// update makes concurrent reads (other tabs, other portal instances) write
// once; the version stays, so a touch never conflicts with a step.
func TouchActivity(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, now time.Time) error {
	now = now.UTC()
	if inst.Status != engine.StateRunning || now.Sub(inst.UpdatedAt) < activityGrain {
		return nil
	}
	if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("updated_at = ?", now).
		Where("id = ? AND status = ? AND updated_at < ?", inst.ID, engine.StateRunning, now.Add(-activityGrain)).Exec(ctx); err != nil {
		return fmt.Errorf("record activity of registration %d: %w", inst.ID, err)
	}
	inst.UpdatedAt = now
	return nil
}

// ResumeRecipients are the e-mail addresses of a suspended registration's
// selected persons, each once.
func ResumeRecipients(ctx context.Context, db bun.IDB, p ResumeLinkPayload) ([]string, error) {
	persons, err := store.PersonsByID(ctx, db, p.PersonIDs)
	if err != nil {
		return nil, err
	}
	return store.UniqueAddresses(persons), nil
}

// ArchiveMode says what the archive does with a finished registration's answers.
type ArchiveMode string

// Archive modes.
const (
	ArchiveKeep   ArchiveMode = "archive" // answers move to process_archives.data as JSON
	ArchiveRemove ArchiveMode = "remove"  // answers are deleted; a summary stays
)

// ArchivedAnswer is one answer in the archive form.
type ArchivedAnswer struct {
	StepID   *int64 `json:"stepId,omitempty"`
	PersonID *int64 `json:"personId,omitempty"`
	Key      string `json:"key"`
	Value    string `json:"value"`
}

// ArchiveFinished archives registrations that are COMPLETED or CANCELLED
// and ended before now-ArchiveAfter: their process_data rows leave the
// live table (into an archive form, or removed, by mode) and a
// process_archives row records it; orders and memberships are untouched.
// Each instance is one transaction; an archived instance is never taken
// again. It returns how many it archived.
func ArchiveFinished(ctx context.Context, db *bun.DB, now time.Time, mode ArchiveMode) (int, error) {
	if mode != ArchiveKeep && mode != ArchiveRemove {
		return 0, fmt.Errorf("archive mode %q: want archive or remove", mode)
	}
	now = now.UTC()
	var ids []int64
	err := engine.ScopeOrg(ctx, db.NewSelect().Model((*engine.ProcessInstance)(nil)), "organisation_id").Column("id").
		Where("status IN (?)", bun.List([]engine.ProcessState{engine.StateCompleted, engine.StateCancelled})).
		Where("COALESCE(end_time, updated_at) < ?", now.Add(-ArchiveAfter)).
		Where("NOT EXISTS (SELECT 1 FROM process_archives AS a WHERE a.instance_id = process_instance.id)").
		OrderExpr("id").Limit(1000).Scan(ctx, &ids)
	if err != nil {
		return 0, fmt.Errorf("find registrations to archive: %w", err)
	}
	n := 0
	for _, id := range ids {
		err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			var rows []engine.ProcessData
			if err := tx.NewSelect().Model(&rows).Where("instance_id = ?", id).OrderExpr("id").Scan(ctx); err != nil {
				return fmt.Errorf("load answers of %d: %w", id, err)
			}
			persons := map[int64]bool{}
			answers := make([]ArchivedAnswer, len(rows))
			for i, r := range rows {
				answers[i] = ArchivedAnswer{StepID: r.StepID, PersonID: r.PersonID, Key: r.DataKey, Value: r.DataValue}
				if r.PersonID != nil {
					persons[*r.PersonID] = true
				}
			}
			summary, _ := json.Marshal(map[string]any{"answers": len(rows), "persons": len(persons)})
			a := map[string]any{"instance_id": id, "mode": string(mode), "archived_at": now, "answers": len(rows), "summary": string(summary), "data": nil}
			if mode == ArchiveKeep {
				data, err := json.Marshal(answers)
				if err != nil {
					return err
				}
				a["data"] = string(data)
			}
			res, err := tx.NewInsert().Model(&a).TableExpr("process_archives").On("CONFLICT (instance_id) DO NOTHING").Exec(ctx)
			if err != nil {
				return fmt.Errorf("archive %d: %w", id, err)
			}
			if k, _ := res.RowsAffected(); k != 1 {
				return nil // another instance archived it first
			}
			if _, err := tx.NewDelete().Model((*engine.ProcessData)(nil)).Where("instance_id = ?", id).Exec(ctx); err != nil {
				return fmt.Errorf("remove answers of %d: %w", id, err)
			}
			n++
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ResumeContext is the organisation and the selected persons' names of a
// suspended registration, for its resume-link message.
func ResumeContext(ctx context.Context, db bun.IDB, p ResumeLinkPayload) (org engine.Organisation, persons []string, err error) {
	period, err := store.LoadPeriod(ctx, db, p.PeriodID)
	if err != nil {
		return org, nil, err
	}
	if err := db.NewSelect().Model(&org).Where("id = ?", period.OrganisationID).Scan(ctx); err != nil {
		return org, nil, engine.NotFoundOr(err, "organisation")
	}
	ps, err := store.PersonsByID(ctx, db, p.PersonIDs)
	if err != nil {
		return org, nil, err
	}
	for _, person := range ps {
		persons = append(persons, person.FirstName+" "+person.LastName)
	}
	return org, persons, nil
}

// ScheduleLifecycle has r suspend idle registrations every hour and
// archive finished ones (with mode) every day, on every instance (each
// period's run happens once in the cluster). now is the clock.
func ScheduleLifecycle(r *jobs.Runner, db *bun.DB, mode ArchiveMode, now func() time.Time, log *slog.Logger) {
	engine.ScheduleCounting(r, db, now, log,
		engine.CountingJob{Kind: engine.KindSuspendIdle, Every: time.Hour, Run: SuspendIdle, Done: "suspended idle registrations"},
		engine.CountingJob{Kind: engine.KindArchiveFinished, Every: 24 * time.Hour, Run: func(ctx context.Context, db *bun.DB, now time.Time) (int, error) {
			return ArchiveFinished(ctx, db, now, mode)
		}, Done: "archived finished registrations (mode " + string(mode) + ")"})
}
