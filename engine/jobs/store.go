// Package jobs is the portal's durable job runner, on the database the
// portal already has (PostgreSQL or SQLite). A job is a row in the jobs
// table, written with Enqueue in the same transaction as the change it
// announces, so that the change and its consequences (an e-mail, a
// follow-up) commit or roll back together: the transactional outbox.
//
// Every instance runs workers; there is no leader. A worker claims due jobs
// with FOR UPDATE SKIP LOCKED on PostgreSQL (SQLite runs on one connection,
// which serialises claims), holds them under a lease, and records the
// outcome. A worker that dies leaves a lease that expires, and the job is
// claimed again. Failures retry with exponential backoff and jitter until
// the job runs out of attempts and is dead: listed by `portal jobs` and
// retried by staff. Dedup keys are unique, so work enqueued twice (a
// replayed request, the same schedule on every instance) is one job.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// State is where a job is in its life.
type State string

// Job states. Queued and failed jobs are due once run_at has passed.
const (
	StateQueued    State = "queued"    // never tried
	StateRunning   State = "running"   // leased to a worker until LockedUntil
	StateFailed    State = "failed"    // tried; retried at RunAt
	StateSucceeded State = "succeeded" // done
	StateDead      State = "dead"      // out of attempts, or failed permanently: staff retry it
)

// DefaultMaxAttempts is how often a job runs before it is dead, unless its
// Spec says otherwise. With the default backoff (10 s doubling, at most
// 1 h) ten attempts span about four hours: a mail server outage of an
// afternoon delays mail, it does not lose it.
const DefaultMaxAttempts = 10

// maxErrorLen bounds the stored error text of a failed attempt.
const maxErrorLen = 2000

// Job is one unit of durable work.
type Job struct {
	bun.BaseModel `bun:"table:jobs"`
	ID            int64      `bun:"id,pk,autoincrement"`
	Kind          string     `bun:"kind,notnull"`
	DedupKey      *string    `bun:"dedup_key"`
	Payload       string     `bun:"payload,notnull"`
	State         State      `bun:"state,notnull"`
	Attempts      int        `bun:"attempts,notnull"`
	MaxAttempts   int        `bun:"max_attempts,notnull"`
	RunAt         time.Time  `bun:"run_at,notnull"`
	LockedBy      *string    `bun:"locked_by"`
	LockedUntil   *time.Time `bun:"locked_until"`
	LastError     string     `bun:"last_error,notnull"`
	CreatedAt     time.Time  `bun:"created_at,notnull"`
	UpdatedAt     time.Time  `bun:"updated_at,notnull"`
	FinishedAt    *time.Time `bun:"finished_at"`
}

// Decode reads the job's JSON payload into v.
func (j *Job) Decode(v any) error {
	if err := json.Unmarshal([]byte(j.Payload), v); err != nil {
		return Permanent(fmt.Errorf("job %d (%s): payload: %w", j.ID, j.Kind, err))
	}
	return nil
}

// Spec is a job to enqueue.
type Spec struct {
	Kind string
	// DedupKey, when set, makes the job unique: enqueueing a second job
	// with the same key does nothing, whatever the first one's state. It
	// must be deterministic (built from what the job is about, never from
	// time.Now or randomness) for that to hold across instances.
	DedupKey string
	// Payload is marshalled to JSON; nil is {}.
	Payload any
	// RunAt is when the job becomes due; zero: now.
	RunAt time.Time
	// MaxAttempts; zero: DefaultMaxAttempts.
	MaxAttempts int
}

// Enqueue writes a job on db, usually the transaction of the change the job
// announces. It reports whether a job was written: false when one with the
// same dedup key exists already.
func Enqueue(ctx context.Context, db bun.IDB, now time.Time, s Spec) (bool, error) {
	j, err := newJob(now, s)
	if err != nil {
		return false, err
	}
	res, err := db.NewInsert().Model(j).On("CONFLICT (dedup_key) DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("enqueue %s: %w", s.Kind, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("enqueue %s: %w", s.Kind, err)
	}
	return n == 1, nil
}

// EnqueueAll writes jobs as Enqueue writes each, with one statement: a job
// whose dedup key exists already (or comes earlier in specs) is left out.
func EnqueueAll(ctx context.Context, db bun.IDB, now time.Time, specs []Spec) error {
	if len(specs) == 0 {
		return nil
	}
	js := make([]*Job, len(specs))
	for i, s := range specs {
		var err error
		if js[i], err = newJob(now, s); err != nil {
			return err
		}
	}
	if _, err := db.NewInsert().Model(&js).On("CONFLICT (dedup_key) DO NOTHING").Returning("NULL").Exec(ctx); err != nil {
		return fmt.Errorf("enqueue %s: %w", specs[0].Kind, err)
	}
	return nil
}

// newJob is the row Enqueue writes for s.
func newJob(now time.Time, s Spec) (*Job, error) {
	if s.Kind == "" {
		return nil, errors.New("enqueue: job kind is empty")
	}
	payload := []byte("{}")
	if s.Payload != nil {
		var err error
		if payload, err = json.Marshal(s.Payload); err != nil {
			return nil, fmt.Errorf("enqueue %s: payload: %w", s.Kind, err)
		}
	}
	now = now.UTC()
	j := &Job{Kind: s.Kind, Payload: string(payload), State: StateQueued, MaxAttempts: s.MaxAttempts,
		RunAt: s.RunAt.UTC(), CreatedAt: now, UpdatedAt: now}
	if s.DedupKey != "" {
		j.DedupKey = &s.DedupKey
	}
	if j.MaxAttempts <= 0 {
		j.MaxAttempts = DefaultMaxAttempts
	}
	if s.RunAt.IsZero() {
		j.RunAt = now
	}
	return j, nil
}

// claim leases up to limit due jobs of the given kinds to owner until
// now+lease and returns them. Due: queued or failed with run_at passed, or
// running under a lease that has expired (its worker died). Each claim
// counts as an attempt.
//
// On PostgreSQL, FOR UPDATE SKIP LOCKED makes concurrent claims take
// disjoint rows without waiting for one another; without it two workers
// read the same due rows and both run them. SQLite has one connection per
// process and one writer per file, so a claim there is serial anyway.
func claim(ctx context.Context, db bun.IDB, kinds []string, owner string, now time.Time, lease time.Duration, limit int) ([]Job, error) {
	if len(kinds) == 0 || limit <= 0 {
		return nil, nil
	}
	now = now.UTC()
	lock := ""
	if db.Dialect().Name() == dialect.PG {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// A job whose last lease expired with no attempts left is dead, not
	// claimed once more: a job that kills its worker must not loop forever.
	if _, err := db.NewRaw(`UPDATE jobs SET state = ?, last_error = ?, finished_at = ?, updated_at = ?, locked_by = NULL, locked_until = NULL
		WHERE state = ? AND locked_until < ? AND attempts >= max_attempts AND kind IN (?)`,
		StateDead, "lease expired: the worker stopped without reporting (crash or shutdown)", now, now,
		StateRunning, now, bun.List(kinds)).Exec(ctx); err != nil {
		return nil, fmt.Errorf("claim jobs: reap expired leases: %w", err)
	}
	var out []Job
	err := db.NewRaw(`UPDATE jobs SET state = ?, attempts = attempts + 1, locked_by = ?, locked_until = ?, updated_at = ?
		WHERE id IN (SELECT id FROM jobs
			WHERE kind IN (?) AND ((state IN (?, ?) AND run_at <= ?) OR (state = ? AND locked_until < ?))
			ORDER BY run_at, id LIMIT ?`+lock+`)
		RETURNING *`,
		StateRunning, owner, now.Add(lease), now,
		bun.List(kinds), StateQueued, StateFailed, now, StateRunning, now, limit).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return out, nil
}

// complete records that owner's attempt at job id succeeded. It reports
// false when the lease was no longer owner's (it expired and another worker
// took the job): that worker's outcome counts.
func complete(ctx context.Context, db bun.IDB, id int64, owner string, now time.Time) (bool, error) {
	now = now.UTC()
	res, err := db.NewRaw(`UPDATE jobs SET state = ?, finished_at = ?, updated_at = ?, locked_by = NULL, locked_until = NULL
		WHERE id = ? AND state = ? AND locked_by = ?`, StateSucceeded, now, now, id, StateRunning, owner).Exec(ctx)
	return affectedOne(res, err, "complete job")
}

// fail records that owner's attempt at job failed with cause: dead when dead
// is set, else failed and due again at retryAt.
func fail(ctx context.Context, db bun.IDB, j *Job, owner string, cause error, dead bool, retryAt, now time.Time) (bool, error) {
	now = now.UTC()
	msg := cause.Error()
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen]
	}
	state, finished := StateFailed, (*time.Time)(nil)
	if dead {
		state, finished, retryAt = StateDead, &now, now
	}
	res, err := db.NewRaw(`UPDATE jobs SET state = ?, last_error = ?, run_at = ?, finished_at = ?, updated_at = ?, locked_by = NULL, locked_until = NULL
		WHERE id = ? AND state = ? AND locked_by = ?`, state, msg, retryAt.UTC(), finished, now, j.ID, StateRunning, owner).Exec(ctx)
	return affectedOne(res, err, "record job failure")
}

func affectedOne(res sql.Result, err error, what string) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n == 1, nil
}

// ErrNotRetryable says Retry found no failed or dead job with that id.
var ErrNotRetryable = errors.New("no failed or dead job with that id")

// Retry makes a failed or dead job due now with a fresh set of attempts:
// what staff do once the cause (a wrong address, a mail server
// misconfiguration) is fixed. Its last error stays for reference.
func Retry(ctx context.Context, db bun.IDB, id int64, now time.Time) error {
	now = now.UTC()
	res, err := db.NewRaw(`UPDATE jobs SET state = ?, attempts = 0, run_at = ?, finished_at = NULL, updated_at = ?
		WHERE id = ? AND state IN (?, ?)`, StateQueued, now, now, id, StateFailed, StateDead).Exec(ctx)
	ok, err := affectedOne(res, err, "retry job")
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("job %d: %w", id, ErrNotRetryable)
	}
	return nil
}

// ErrAlreadyDue refuses RunNow while a job of the kind is queued, running
// or failing (to be retried): that run is the one asked for.
var ErrAlreadyDue = errors.New("a job of this kind is already queued or running")

// RunNow enqueues a job of kind (a scheduled kind) due now, with the
// payload its schedule gives it, for `portal jobs run` and the staff jobs
// page: the serving instances' workers run it once in the cluster, as
// they run the schedule's. It refuses, naming that job, while one of the
// kind is queued, running or failing, so a run asked for twice, or beside
// the schedule's own, runs once.
func RunNow(ctx context.Context, db bun.IDB, kind string, now time.Time, organisation int64) (*Job, error) {
	now = now.UTC()
	var due Job
	err := db.NewSelect().Model(&due).Where("kind = ? AND state IN (?)", kind, bun.List([]State{StateQueued, StateRunning, StateFailed})).
		Where("run_at <= ?", now).OrderExpr("id").Limit(1).Scan(ctx)
	switch {
	case err == nil:
		return &due, fmt.Errorf("job %d (%s, %s): %w", due.ID, kind, due.State, ErrAlreadyDue)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("run %s: %w", kind, err)
	}
	key := kind + "@run:" + now.Format(time.RFC3339Nano)
	if organisation != 0 {
		key = fmt.Sprintf("%s@run:org%d:%s", kind, organisation, now.Format(time.RFC3339Nano))
	}
	if _, err := Enqueue(ctx, db, now, Spec{Kind: kind, DedupKey: key, Payload: SchedulePayload{Period: now, Organisation: organisation}, RunAt: now}); err != nil {
		return nil, err
	}
	var j Job
	if err := db.NewSelect().Model(&j).Where("dedup_key = ?", key).Scan(ctx); err != nil {
		return nil, fmt.Errorf("run %s: %w", kind, err)
	}
	return &j, nil
}

// List returns the jobs in the given states (all but succeeded when none
// are given), oldest due first, at most limit.
func List(ctx context.Context, db bun.IDB, limit int, states ...State) ([]Job, error) {
	if len(states) == 0 {
		states = []State{StateQueued, StateRunning, StateFailed, StateDead}
	}
	var out []Job
	if err := db.NewSelect().Model(&out).Where("state IN (?)", bun.List(states)).
		OrderExpr("run_at, id").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// KindStats is the state of one kind's jobs, for metrics.
type KindStats struct {
	Kind string
	// Count by state; succeeded jobs are not counted (they accumulate
	// until pruned and say nothing about the queue's health).
	Count map[State]int
	// OldestDue is how long the longest-waiting due job (queued or
	// failed, run_at passed) has waited; zero when none is due.
	OldestDue time.Duration
}

// Stats reports each kind's jobs by state and the age of its oldest due job.
func Stats(ctx context.Context, db bun.IDB, now time.Time) ([]KindStats, error) {
	now = now.UTC()
	var rows []struct {
		Kind  string `bun:"kind"`
		State State  `bun:"state"`
		N     int    `bun:"n"`
	}
	if err := db.NewRaw(`SELECT kind, state, COUNT(*) AS n FROM jobs WHERE state <> ? GROUP BY kind, state ORDER BY kind`, StateSucceeded).
		Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job stats: %w", err)
	}
	var due []struct {
		Kind  string    `bun:"kind"`
		RunAt time.Time `bun:"run_at"`
	}
	if err := db.NewRaw(`SELECT kind, MIN(run_at) AS run_at FROM jobs WHERE state IN (?, ?) AND run_at <= ? GROUP BY kind`,
		StateQueued, StateFailed, now).Scan(ctx, &due); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job stats: %w", err)
	}
	var out []KindStats
	index := map[string]int{}
	get := func(kind string) *KindStats { // valid until the next call
		i, ok := index[kind]
		if !ok {
			i = len(out)
			index[kind] = i
			out = append(out, KindStats{Kind: kind, Count: map[State]int{}})
		}
		return &out[i]
	}
	for _, r := range rows {
		get(r.Kind).Count[r.State] = r.N
	}
	for _, d := range due {
		get(d.Kind).OldestDue = max(0, now.Sub(d.RunAt))
	}
	return out, nil
}

// Prune deletes succeeded jobs finished before cutoff. Their dedup keys go
// with them, so cutoff must lie further back than any deduplicated work
// can be enqueued again (schedules key by period; a payment return's
// replay comes within days).
func Prune(ctx context.Context, db bun.IDB, cutoff time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*Job)(nil)).Where("state = ? AND finished_at < ?", StateSucceeded, cutoff.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune jobs: %w", err)
	}
	return res.RowsAffected()
}
