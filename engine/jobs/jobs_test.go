package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/engine/jobs"
)

// clock is a fake clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func only(t *testing.T, db bun.IDB) jobs.Job {
	t.Helper()
	var all []jobs.Job
	if err := db.NewSelect().Model(&all).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("want exactly one job, have %d", len(all))
	}
	return all[0]
}

func work(t *testing.T, r *jobs.Runner, want int) {
	t.Helper()
	n, err := r.Work(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("ran %d jobs, want %d", n, want)
	}
}

func TestEnqueueDeduplicates(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, now := context.Background(), newClock().Now()
		for i, want := range []bool{true, false} {
			ok, err := jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "k", DedupKey: "order:1", Payload: map[string]int{"try": i}})
			if err != nil || ok != want {
				t.Fatalf("enqueue %d = %v, %v; want %v", i, ok, err, want)
			}
		}
		if j := only(t, db); j.Payload != `{"try":0}` || j.State != jobs.StateQueued || j.MaxAttempts != jobs.DefaultMaxAttempts {
			t.Fatalf("job = %+v", j)
		}
		// Without a key, nothing collapses.
		for range 2 {
			if ok, err := jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "k"}); err != nil || !ok {
				t.Fatalf("enqueue without key = %v, %v", ok, err)
			}
		}
		// In a transaction that rolls back, the job goes with the change.
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := jobs.Enqueue(ctx, tx, now, jobs.Spec{Kind: "k", DedupKey: "rolled-back"}); err != nil {
				return err
			}
			return errors.New("the change failed")
		})
		if err == nil {
			t.Fatal("transaction should fail")
		}
		if n, _ := db.NewSelect().Model((*jobs.Job)(nil)).Count(ctx); n != 3 {
			t.Fatalf("%d jobs after a rolled back enqueue, want 3", n)
		}
	})
}

func TestRunsOnceAndRecordsSuccess(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		r := jobs.New(db, jobs.Config{Now: clk.Now})
		var got []string
		r.Handle("greet", func(ctx context.Context, j *jobs.Job) error {
			var p struct{ Name string }
			if err := j.Decode(&p); err != nil {
				return err
			}
			got = append(got, p.Name)
			return nil
		})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "greet", Payload: map[string]string{"Name": "Ada"}})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "greet", Payload: map[string]string{"Name": "later"}, RunAt: clk.Now().Add(time.Hour)})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "someone-elses"})
		work(t, r, 1)
		work(t, r, 0)
		clk.Advance(time.Hour)
		work(t, r, 1)
		if fmt.Sprint(got) != "[Ada later]" {
			t.Fatalf("ran %v", got)
		}
		list, err := jobs.List(ctx, db, 10)
		if err != nil || len(list) != 1 || list[0].Kind != "someone-elses" {
			t.Fatalf("open jobs = %+v, %v; want only the kind without a handler, untouched", list, err)
		}
		done, _ := jobs.List(ctx, db, 10, jobs.StateSucceeded)
		if len(done) != 2 || done[0].FinishedAt == nil || done[0].Attempts != 1 || done[0].LockedBy != nil {
			t.Fatalf("succeeded = %+v", done)
		}
	})
}

func TestBackoffThenDeadThenRetry(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		r := jobs.New(db, jobs.Config{Now: clk.Now, BackoffBase: time.Minute, BackoffMax: 3 * time.Minute})
		r.NoJitter()
		fail := true
		r.Handle("flaky", func(context.Context, *jobs.Job) error {
			if fail {
				return errors.New("mail server down")
			}
			return nil
		})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "flaky", MaxAttempts: 4})
		// The n-th failure waits 1, 2, 3 (capped) minutes.
		for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute} {
			work(t, r, 1)
			j := only(t, db)
			if j.State != jobs.StateFailed || j.Attempts != i+1 || j.LastError != "mail server down" || !j.RunAt.Equal(clk.Now().Add(wait)) {
				t.Fatalf("after failure %d: %+v (now %v)", i+1, j, clk.Now())
			}
			clk.Advance(wait - time.Second)
			work(t, r, 0) // not yet due
			clk.Advance(time.Second)
		}
		work(t, r, 1) // the fourth and last attempt
		j := only(t, db)
		if j.State != jobs.StateDead || j.Attempts != 4 || j.FinishedAt == nil {
			t.Fatalf("after the last attempt: %+v", j)
		}
		clk.Advance(24 * time.Hour)
		work(t, r, 0) // dead stays dead

		fail = false
		if err := jobs.Retry(ctx, db, j.ID, clk.Now()); err != nil {
			t.Fatal(err)
		}
		if j := only(t, db); j.State != jobs.StateQueued || j.Attempts != 0 || j.LastError != "mail server down" {
			t.Fatalf("after retry: %+v", j)
		}
		work(t, r, 1)
		if j := only(t, db); j.State != jobs.StateSucceeded {
			t.Fatalf("after the retried run: %+v", j)
		}
		if err := jobs.Retry(ctx, db, j.ID, clk.Now()); !errors.Is(err, jobs.ErrNotRetryable) {
			t.Fatalf("retrying a succeeded job: %v", err)
		}
		if err := jobs.Retry(ctx, db, 999, clk.Now()); !errors.Is(err, jobs.ErrNotRetryable) {
			t.Fatalf("retrying a missing job: %v", err)
		}
	})
}

func TestJitterStaysWithinHalfTheBackoff(t *testing.T) {
	db := dbtest.SQLite(t)
	ctx, clk := context.Background(), newClock()
	r := jobs.New(db, jobs.Config{Now: clk.Now, BackoffBase: time.Minute})
	r.Handle("flaky", func(context.Context, *jobs.Job) error { return errors.New("no") })
	seen := map[time.Duration]bool{}
	for i := range 20 {
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "flaky", DedupKey: fmt.Sprint(i)})
	}
	work(t, r, 10)
	work(t, r, 10)
	failed, _ := jobs.List(ctx, db, 100, jobs.StateFailed)
	for _, j := range failed {
		d := j.RunAt.Sub(clk.Now())
		if d < 30*time.Second || d > time.Minute {
			t.Fatalf("first retry after %v, want between 30s and 1m", d)
		}
		seen[d] = true
	}
	if len(failed) != 20 || len(seen) < 5 {
		t.Fatalf("%d failed jobs with %d distinct waits: jitter does not spread them", len(failed), len(seen))
	}
}

func TestPermanentAndPanicking(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		r := jobs.New(db, jobs.Config{Now: clk.Now})
		r.Handle("rejected", func(context.Context, *jobs.Job) error {
			return fmt.Errorf("send: %w", jobs.Permanent(errors.New("550 no such user")))
		})
		r.Handle("panics", func(context.Context, *jobs.Job) error { panic("boom") })
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "rejected", DedupKey: "a"})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "panics", DedupKey: "b"})
		work(t, r, 2)
		dead, _ := jobs.List(ctx, db, 10, jobs.StateDead)
		failed, _ := jobs.List(ctx, db, 10, jobs.StateFailed)
		if len(dead) != 1 || dead[0].Kind != "rejected" || dead[0].Attempts != 1 || dead[0].LastError != "send: 550 no such user" {
			t.Fatalf("dead = %+v", dead)
		}
		if len(failed) != 1 || failed[0].Kind != "panics" || failed[0].LastError != "handler panicked: boom" {
			t.Fatalf("failed = %+v", failed)
		}
	})
}

func TestExpiredLeaseIsClaimedAgain(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "mail", MaxAttempts: 2})
		// A worker claims it and dies.
		claimed, err := jobs.Claim(ctx, db, []string{"mail"}, "crashed/1", clk.Now(), time.Minute, 10)
		if err != nil || len(claimed) != 1 || claimed[0].State != jobs.StateRunning || claimed[0].Attempts != 1 {
			t.Fatalf("claim = %+v, %v", claimed, err)
		}
		ran := 0
		r := jobs.New(db, jobs.Config{Now: clk.Now, Lease: time.Minute})
		r.Handle("mail", func(context.Context, *jobs.Job) error { ran++; return nil })
		work(t, r, 0) // leased
		clk.Advance(time.Minute + time.Second)
		work(t, r, 1) // the lease expired
		if j := only(t, db); ran != 1 || j.State != jobs.StateSucceeded || j.Attempts != 2 {
			t.Fatalf("ran %d, job %+v", ran, j)
		}
		// The crashed worker coming back cannot overwrite the outcome.
		if ok, err := jobs.Complete(ctx, db, claimed[0].ID, "crashed/1", clk.Now()); err != nil || ok {
			t.Fatalf("late complete = %v, %v", ok, err)
		}
	})
}

func TestExpiredLeaseWithoutAttemptsLeftIsDead(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "mail", MaxAttempts: 1})
		if _, err := jobs.Claim(ctx, db, []string{"mail"}, "crashed/1", clk.Now(), time.Minute, 1); err != nil {
			t.Fatal(err)
		}
		r := jobs.New(db, jobs.Config{Now: clk.Now})
		r.Handle("mail", func(context.Context, *jobs.Job) error { t.Error("a job without attempts left ran"); return nil })
		clk.Advance(2 * time.Minute)
		work(t, r, 0)
		if j := only(t, db); j.State != jobs.StateDead || j.LockedBy != nil || j.LastError == "" {
			t.Fatalf("job = %+v", j)
		}
	})
}

// TestConcurrentClaimsRunEachJobOnce is the claim under contention: many
// workers on PostgreSQL, each job run exactly once.
func TestConcurrentClaimsRunEachJobOnce(t *testing.T) {
	dbtest.SkipWithoutPostgres(t)
	db := dbtest.Postgres(t)
	ctx := context.Background()
	const total, workers = 600, 12
	now := time.Now()
	for i := range total {
		if _, err := jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "count", DedupKey: fmt.Sprint(i), Payload: map[string]int{"n": i}}); err != nil {
			t.Fatal(err)
		}
	}
	var runs [total]atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		r := jobs.New(db, jobs.Config{Instance: fmt.Sprint("w", w)})
		r.Handle("count", func(_ context.Context, j *jobs.Job) error {
			var p struct{ N int }
			if err := j.Decode(&p); err != nil {
				return err
			}
			runs[p.N].Add(1)
			return nil
		})
		wg.Go(func() {
			for {
				n, err := r.Work(ctx, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range runs {
		if n := runs[i].Load(); n != 1 {
			t.Fatalf("job %d ran %d times", i, n)
		}
	}
	if n, _ := db.NewSelect().Model((*jobs.Job)(nil)).Where("state = ? AND attempts = 1", jobs.StateSucceeded).Count(ctx); n != total {
		t.Fatalf("%d of %d jobs succeeded at the first attempt", n, total)
	}
}

func TestSchedulesCollapseAcrossInstances(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		var runs atomic.Int32
		var periods []time.Time
		var mu sync.Mutex
		var instances []*jobs.Runner
		for i := range 3 {
			r := jobs.New(db, jobs.Config{Now: clk.Now, Instance: fmt.Sprint("i", i)})
			r.Every("archive", 24*time.Hour)
			r.Handle("archive", func(_ context.Context, j *jobs.Job) error {
				var p jobs.SchedulePayload
				if err := j.Decode(&p); err != nil {
					return err
				}
				runs.Add(1)
				mu.Lock()
				periods = append(periods, p.Period)
				mu.Unlock()
				return nil
			})
			instances = append(instances, r)
		}
		for day := range 2 {
			for _, r := range instances {
				if err := r.EnqueueSchedules(ctx); err != nil {
					t.Fatal(err)
				}
				r.Work(ctx, 10)
			}
			if n := runs.Load(); n != int32(day+1) {
				t.Fatalf("day %d: %d runs", day, n)
			}
			clk.Advance(24 * time.Hour)
		}
		if !periods[0].Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) || !periods[1].Equal(periods[0].Add(24*time.Hour)) {
			t.Fatalf("periods %v", periods)
		}
	})
}

func TestStatsAndPrune(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "mail"})
		clk.Advance(90 * time.Second)
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "mail"})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "archive", RunAt: clk.Now().Add(time.Hour)})
		jobs.Enqueue(ctx, db, clk.Now(), jobs.Spec{Kind: "done"})
		r := jobs.New(db, jobs.Config{Now: clk.Now})
		r.Handle("done", func(context.Context, *jobs.Job) error { return nil })
		work(t, r, 1)
		stats, err := jobs.Stats(ctx, db, clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]jobs.KindStats{}
		for _, s := range stats {
			got[s.Kind] = s
		}
		if m := got["mail"]; m.Count[jobs.StateQueued] != 2 || m.OldestDue != 90*time.Second {
			t.Fatalf("mail stats %+v", m)
		}
		if a := got["archive"]; a.Count[jobs.StateQueued] != 1 || a.OldestDue != 0 {
			t.Fatalf("archive stats %+v (not due yet: no age)", a)
		}
		if _, ok := got["done"]; ok {
			t.Fatalf("succeeded jobs are counted: %+v", got["done"])
		}
		if n, err := jobs.Prune(ctx, db, clk.Now()); err != nil || n != 0 {
			t.Fatalf("prune now = %d, %v", n, err)
		}
		if n, err := jobs.Prune(ctx, db, clk.Now().Add(time.Second)); err != nil || n != 1 {
			t.Fatalf("prune later = %d, %v", n, err)
		}
	})
}

func TestRunStopsGracefully(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		r := jobs.New(db, jobs.Config{Poll: 20 * time.Millisecond, Workers: 3})
		started, release := make(chan struct{}), make(chan struct{})
		r.Handle("slow", func(ctx context.Context, j *jobs.Job) error {
			close(started)
			<-release
			return ctx.Err() // not cancelled by the shutdown
		})
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		jobs.Enqueue(context.Background(), db, time.Now(), jobs.Spec{Kind: "slow"})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the job did not start")
		}
		cancel()
		select {
		case <-done:
			t.Fatal("Run returned while a job was running")
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
		if j := only(t, db); j.State != jobs.StateSucceeded {
			t.Fatalf("job %+v", j)
		}
	})
}

// TestRunNow: a scheduled kind runs at once when asked, beside its
// schedule, once: asking again while a run is due names that run.
func TestRunNow(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx, clk := context.Background(), newClock()
		r := jobs.New(db, jobs.Config{Now: clk.Now})
		runs := 0
		r.Every("reminders.unpaid", 24*time.Hour)
		r.Handle("reminders.unpaid", func(context.Context, *jobs.Job) error { runs++; return nil })

		// Today's scheduled run has happened.
		if err := r.EnqueueSchedules(ctx); err != nil {
			t.Fatal(err)
		}
		work(t, r, 1)
		clk.Advance(time.Hour)

		j, err := jobs.RunNow(ctx, db, "reminders.unpaid", clk.Now(), 0)
		if err != nil || j.Kind != "reminders.unpaid" || j.State != jobs.StateQueued {
			t.Fatalf("run now: %+v %v", j, err)
		}
		// Asked again before it ran: the same run, not a second one; the
		// schedule's own enqueue does not add one either.
		again, err := jobs.RunNow(ctx, db, "reminders.unpaid", clk.Now(), 0)
		if !errors.Is(err, jobs.ErrAlreadyDue) || again.ID != j.ID {
			t.Fatalf("second run now: %+v %v", again, err)
		}
		if err := r.EnqueueSchedules(ctx); err != nil {
			t.Fatal(err)
		}
		work(t, r, 1)
		work(t, r, 0)
		if runs != 2 {
			t.Fatalf("%d runs, want the schedule's and the one asked for", runs)
		}
		// Once it ran, it may be asked for again.
		if _, err := jobs.RunNow(ctx, db, "reminders.unpaid", clk.Now(), 0); err != nil {
			t.Fatalf("run now after the run: %v", err)
		}
	})
}
