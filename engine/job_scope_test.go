package engine_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/registration"
)

// TestScheduledJobRunForOneOrganisation: a scheduled job run by hand for
// one organisation (jobs.RunNow with its id, as `portal jobs run KIND
// --org ID` and the staff jobs page queue it) does that organisation's
// work only; the same run without an organisation does everyone's. The
// pruning jobs, the portal's own, are refused for one organisation.
func TestScheduledJobRunForOneOrganisation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.NewFixture(t, db)
		enginetest.OtherOrganisation(t, db)
		ctx := f.Ctx
		// An idle registration in each organisation.
		if _, _, err := registration.Of(f.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, 1, nil); err != nil {
			t.Fatal(err)
		}
		var mine engine.ProcessInstance
		if err := db.NewSelect().Model(&mine).Where("organisation_id = 1").Limit(1).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		theirs := mine
		theirs.ID, theirs.OrganisationID, theirs.RelatedEntityID, theirs.UserKey = 0, 2, 10, "hillside"
		if _, err := db.NewInsert().Model(&theirs).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("status = ?, updated_at = ?", engine.StateRunning, clock.Now().Add(-30*24*time.Hour)).
			Where("id IN (?)", bun.List([]int64{mine.ID, theirs.ID})).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		status := func(id int64) engine.ProcessState {
			var p engine.ProcessInstance
			if err := db.NewSelect().Model(&p).Where("id = ?", id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return p.Status
		}
		r := jobs.New(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
		registration.ScheduleLifecycle(r, db, registration.ArchiveKeep, clock.Now, slog.New(slog.DiscardHandler))
		message.ScheduleMessages(r, db, clock.Now, slog.New(slog.DiscardHandler))
		run := func(org int64) {
			t.Helper()
			if _, err := jobs.RunNow(ctx, db, engine.KindSuspendIdle, clock.Now(), org); err != nil {
				t.Fatal(err)
			}
			if n, err := r.Work(ctx, 5); err != nil || n != 1 {
				t.Fatalf("work = %d, %v", n, err)
			}
		}
		run(2)
		if status(theirs.ID) == engine.StateRunning || status(mine.ID) != engine.StateRunning {
			t.Fatalf("run for organisation 2: theirs %s, mine %s", status(theirs.ID), status(mine.ID))
		}
		run(0)
		if status(mine.ID) == engine.StateRunning {
			t.Fatalf("run for every organisation: mine still %s", status(mine.ID))
		}
		if err := engine.CheckRunKind(jobs.PruneKind, 1); engine.ErrorCode(err) != engine.CodeValidation {
			t.Errorf("pruning for one organisation: %v", err)
		}
		if err := engine.CheckRunKind(engine.KindQueueReminders, 1); err != nil {
			t.Errorf("reminders for one organisation: %v", err)
		}
	})
}
