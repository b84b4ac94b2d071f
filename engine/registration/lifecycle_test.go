package registration_test

import (
	"context"
	"encoding/json"
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

func TestSuspendIdleAndResumeByLoading(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(clock.Now().UTC())
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form := startWith(t, d, enginetest.Alex, enginetest.Robin)
		status := func() engine.ProcessState {
			var inst engine.ProcessInstance
			db.NewSelect().Model(&inst).Where("id = ?", form.ProcessID).Scan(ctx)
			return inst.Status
		}
		clk.Advance(message.SuspendAfter - time.Minute)
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 0 {
			t.Fatalf("before 24 h: suspended %d, %v", n, err)
		}
		clk.Advance(2 * time.Minute)
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 1 || status() != engine.StateSuspended {
			t.Fatalf("after 24 h: suspended %d (%v), status %s", n, err, status())
		}
		if n, _ := registration.SuspendIdle(ctx, db, clk.Now()); n != 0 {
			t.Fatalf("a second run suspended %d", n)
		}
		if n := enginetest.CountRows(t, db, (*engine.OutboxMessage)(nil), "kind = ?", registration.KindResumeLink); n != 1 {
			t.Fatalf("%d resume-link messages", n)
		}
		if n := enginetest.CountRows(t, db, (*jobs.Job)(nil), "kind = ?", registration.KindResumeLink); n != 1 {
			t.Fatalf("%d resume-link jobs", n)
		}
		// Loading it moves it back to RUNNING, where the member left it.
		again, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil)
		if err != nil || again.ProcessID != form.ProcessID || again.State != engine.StateRunning || again.Step != 1 || status() != engine.StateRunning {
			t.Fatalf("load after suspension: %+v %v, stored %s", again, err, status())
		}
		// Left alone again: suspended again, with a new message.
		clk.Advance(message.SuspendAfter + time.Minute)
		if n, _ := registration.SuspendIdle(ctx, db, clk.Now()); n != 1 {
			t.Fatalf("second suspension: %d", n)
		}
		if n := enginetest.CountRows(t, db, (*engine.OutboxMessage)(nil), "kind = ?", registration.KindResumeLink); n != 2 {
			t.Fatalf("%d resume-link messages after the second suspension", n)
		}
		// Resume moves it to RUNNING too.
		if f, err := registration.Of(d.Svc).Resume(ctx, engine.DemoUserKey, form.ProcessIDString()); err != nil || f.State != engine.StateRunning || status() != engine.StateRunning {
			t.Fatalf("resume: %v, %s", err, status())
		}
		var msg engine.OutboxMessage
		db.NewSelect().Model(&msg).Where("kind = ?", registration.KindResumeLink).Limit(1).Scan(ctx)
		var p registration.ResumeLinkPayload
		if err := jsonUnmarshal(msg.Payload, &p); err != nil || p.InstanceID != form.ProcessID || p.PeriodID != engine.DemoPeriodID || len(p.PersonIDs) != 2 {
			t.Fatalf("payload %s", msg.Payload)
		}
		if to, _ := registration.ResumeRecipients(ctx, db, p); len(to) != 1 || to[0] != "alex.morgan@example.org" {
			t.Fatalf("recipients %v (Robin shares Alex's address)", to)
		}
	})
}

func TestArchiveFinishedAfter90Days(t *testing.T) {
	for _, mode := range []registration.ArchiveMode{registration.ArchiveKeep, registration.ArchiveRemove} {
		t.Run(string(mode), func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := context.Background()
				clk := enginetest.NewClock(clock.Now().UTC())
				d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
				res := d.Pay(d.Commit(enginetest.Alex, enginetest.Robin))
				id := res.ProcessID
				answers := enginetest.CountRows(t, db, (*engine.ProcessData)(nil), "instance_id = ?", id)
				if answers == 0 {
					t.Fatal("no answers to archive")
				}
				// An unfinished registration of another user is never archived.
				clk.Advance(registration.ArchiveAfter - time.Hour)
				if n, err := registration.ArchiveFinished(ctx, db, clk.Now(), mode); err != nil || n != 0 {
					t.Fatalf("before 90 days: %d, %v", n, err)
				}
				clk.Advance(2 * time.Hour)
				if n, err := registration.ArchiveFinished(ctx, db, clk.Now(), mode); err != nil || n != 1 {
					t.Fatalf("after 90 days: %d, %v", n, err)
				}
				if n, _ := registration.ArchiveFinished(ctx, db, clk.Now().Add(24*time.Hour), mode); n != 0 {
					t.Fatalf("a second run archived %d", n)
				}
				if n := enginetest.CountRows(t, db, (*engine.ProcessData)(nil), "instance_id = ?", id); n != 0 {
					t.Fatalf("%d answers left in the live table", n)
				}
				var a struct {
					Mode    string  `bun:"mode"`
					Answers int     `bun:"answers"`
					Data    *string `bun:"data"`
				}
				if err := db.NewSelect().TableExpr("process_archives").Column("mode", "answers", "data").Where("instance_id = ?", id).Scan(ctx, &a); err != nil {
					t.Fatal(err)
				}
				if a.Mode != string(mode) || a.Answers != answers || (mode == registration.ArchiveKeep) != (a.Data != nil) {
					t.Fatalf("archive row %+v, want %d answers", a, answers)
				}
				if mode == registration.ArchiveKeep {
					var rows []map[string]any
					if err := jsonUnmarshal(*a.Data, &rows); err != nil || len(rows) != answers {
						t.Fatalf("archive form holds %d answers (%v), want %d", len(rows), err, answers)
					}
				}
				// The order and the memberships stay.
				if n := enginetest.CountRows(t, db, (*engine.Order)(nil), "process_instance_id = ? AND status = ?", id, engine.OrderPaid); n != 1 {
					t.Fatalf("%d paid orders after archiving", n)
				}
				if n := enginetest.CountRows(t, db, (*engine.Membership)(nil), "process_instance_id = ? AND status = ?", id, engine.MembershipActive); n != 2 {
					t.Fatalf("%d memberships after archiving", n)
				}
			})
		})
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// TestSuspendIdleAfterTheOrganisationsTime: an organisation that waits two
// hours instead of a day.
func TestSuspendIdleAfterTheOrganisationsTime(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(clock.Now().UTC())
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		hours := 2
		if _, err := message.Of(d.Svc).UpdateMessageSettings(ctx, 1, message.SettingsChange{ResumeAfterHours: &hours}); err != nil {
			t.Fatal(err)
		}
		startWith(t, d, enginetest.Alex)
		clk.Advance(2*time.Hour - time.Minute)
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 0 {
			t.Fatalf("before two hours: %d, %v", n, err)
		}
		clk.Advance(2 * time.Minute)
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 1 {
			t.Fatalf("after two hours: %d, %v", n, err)
		}
	})
}

// TestReadingCountsAsActivity: a member who only reads their registration
// (the form, the review) keeps it from being suspended; reads within a few
// minutes of the last recorded activity write nothing.
func TestReadingCountsAsActivity(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		clk := enginetest.NewClock(clock.Now().UTC())
		d := enginetest.Seed(t, db, engine.WithClock(clk.Now))
		form := startWith(t, d, enginetest.Alex)
		lastActive := func() time.Time {
			var inst engine.ProcessInstance
			if err := db.NewSelect().Model(&inst).Where("id = ?", form.ProcessID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return inst.UpdatedAt.UTC()
		}
		clk.Advance(time.Minute)
		before := lastActive()
		if _, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil); err != nil {
			t.Fatal(err)
		}
		if !lastActive().Equal(before) {
			t.Fatalf("a read a minute after the last step wrote: %v -> %v", before, lastActive())
		}
		clk.Advance(message.SuspendAfter - 2*time.Hour)
		if _, err := registration.Of(d.Svc).Review(ctx, engine.DemoUserKey, form.ProcessIDString()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(3 * time.Hour) // a day and an hour after the last write, three hours after the read
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 0 {
			t.Fatalf("suspended %d (%v) three hours after a read", n, err)
		}
		clk.Advance(message.SuspendAfter)
		if n, err := registration.SuspendIdle(ctx, db, clk.Now()); err != nil || n != 1 {
			t.Fatalf("a day after the read: suspended %d, %v", n, err)
		}
	})
}

// startWith opens the demo registration and selects persons: a RUNNING
// registration on its first question.
func startWith(t *testing.T, d *enginetest.Demo, persons ...int64) *registration.Form {
	t.Helper()
	ctx := context.Background()
	form, _, err := registration.Of(d.Svc).LoadMembershipForm(ctx, engine.DemoUserKey, engine.DemoPeriodID, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]registration.PersonInput, len(persons))
	for i, id := range persons {
		in[i] = registration.PersonInput{ID: id}
	}
	if _, err := registration.Of(d.Svc).Next(ctx, engine.DemoUserKey, registration.NextInput{ProcessID: form.ProcessIDString(), Step: 0, People: in}); err != nil {
		t.Fatal(err)
	}
	return form
}
