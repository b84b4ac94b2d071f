package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/clock"
)

// Handler does one job. A nil error completes it; an error retries it
// later, unless it is Permanent or the job is out of attempts: then it is
// dead. The context ends before the job's lease does.
type Handler func(ctx context.Context, job *Job) error

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that retrying cannot fix (a rejected address,
// a payload that does not parse): the job is dead at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, is Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// Outcomes a Runner reports to its Observer.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed" // will be retried
	OutcomeDead      = "dead"
)

// Observer learns of every attempt's outcome (metrics).
type Observer interface {
	JobDone(kind, outcome string, took time.Duration)
}

// Config tunes a Runner; zero fields take the defaults.
type Config struct {
	// Workers is how many jobs this instance runs at once (default 2).
	Workers int
	// Poll is how often an idle worker looks for due jobs (default 1s).
	Poll time.Duration
	// Lease is how long a claimed job belongs to its worker (default 5m).
	// A handler's context ends a little earlier, so a live worker never
	// outlasts its lease; a dead worker's job is claimed again after it.
	Lease time.Duration
	// BackoffBase and BackoffMax bound the wait before a retry: the n-th
	// failure waits BackoffBase·2^(n-1), at most BackoffMax, of which a
	// random part (up to half) is taken off so that jobs failing together
	// do not retry together (defaults 10s and 1h).
	BackoffBase, BackoffMax time.Duration
	// Instance names this process in locks (default host name and pid).
	Instance string
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
	// Logger gets failures (default slog.Default()).
	Logger *slog.Logger
	// Observer, when set, learns every attempt's outcome.
	Observer Observer
}

type schedule struct {
	kind  string
	every time.Duration
}

// Runner runs the jobs of the kinds it has handlers for. Register every
// handler and schedule before Run.
type Runner struct {
	db        *bun.DB
	cfg       Config
	handlers  map[string]Handler
	schedules []schedule
	jitter    func(n int64) int64
}

// New returns a Runner on db.
func New(db *bun.DB, cfg Config) *Runner {
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Minute
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = 10 * time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = time.Hour
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Runner{db: db, cfg: cfg, handlers: map[string]Handler{}, jitter: mrand.Int64N}
}

// Handle registers the handler of kind.
func (r *Runner) Handle(kind string, h Handler) { r.handlers[kind] = h }

// Every enqueues a job of kind once per period (UTC-aligned: every 24h is
// each day from midnight UTC). Every instance enqueues it; the dedup key
// names the kind and the period's start, so the cluster runs it once per
// period. The job's payload is {"period": start}.
func (r *Runner) Every(kind string, period time.Duration) {
	r.schedules = append(r.schedules, schedule{kind: kind, every: period})
}

// SchedulePayload is the payload of a job enqueued by Every.
type SchedulePayload struct {
	Period time.Time `json:"period"`
	// Organisation, when not 0, is the one organisation a run by hand
	// (RunNow) is for; the schedule's runs cover every organisation.
	Organisation int64 `json:"organisation,omitempty"`
}

// ScheduleKey is the dedup key of kind's scheduled job for the period
// starting at start.
func ScheduleKey(kind string, start time.Time) string {
	return kind + "@" + start.UTC().Format(time.RFC3339)
}

// EnqueueSchedules enqueues the current period's job of every schedule that
// has none yet.
func (r *Runner) EnqueueSchedules(ctx context.Context) error {
	now := r.cfg.Now().UTC()
	for _, s := range r.schedules {
		start := now.Truncate(s.every)
		if _, err := Enqueue(ctx, r.db, now, Spec{Kind: s.kind, DedupKey: ScheduleKey(s.kind, start),
			Payload: SchedulePayload{Period: start}, RunAt: start}); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runner) kinds() []string {
	out := make([]string, 0, len(r.handlers))
	for k := range r.handlers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// backoff is the wait after a job's attempts-th failure.
func (r *Runner) backoff(attempts int) time.Duration {
	d := r.cfg.BackoffMax
	if attempts < 1 {
		attempts = 1
	}
	if attempts <= 32 {
		if b := r.cfg.BackoffBase << (attempts - 1); b > 0 && b < d {
			d = b
		}
	}
	half := int64(d / 2)
	return time.Duration(half + r.jitter(half+1))
}

// owner is a fresh lock owner for one claim: the instance and a random
// part, so that a worker whose lease expired cannot complete a job that
// has been claimed again, even by itself.
func (r *Runner) owner() string {
	b := make([]byte, 6)
	rand.Read(b)
	return r.cfg.Instance + "/" + hex.EncodeToString(b)
}

// Work claims up to n due jobs and runs them one after the other; it
// returns how many it ran. Run's workers call it; tests call it directly.
func (r *Runner) Work(ctx context.Context, n int) (int, error) {
	owner := r.owner()
	claimed, err := claim(ctx, r.db, r.kinds(), owner, r.cfg.Now(), r.cfg.Lease, n)
	if err != nil {
		return 0, err
	}
	for i := range claimed {
		r.run(ctx, &claimed[i], owner)
	}
	return len(claimed), nil
}

// run runs one claimed job and records its outcome. The handler's context
// is not cancelled by ctx (a shutdown lets the job finish) but ends before
// the lease.
func (r *Runner) run(ctx context.Context, j *Job, owner string) {
	log := r.cfg.Logger.With("job", j.ID, "kind", j.Kind, "attempt", j.Attempts)
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.Lease*9/10)
	start := time.Now()
	err := r.call(hctx, j)
	cancel()
	took := time.Since(start)
	rec := context.WithoutCancel(ctx)
	now := r.cfg.Now()
	outcome := OutcomeSucceeded
	var ok bool
	var recErr error
	if err == nil {
		ok, recErr = complete(rec, r.db, j.ID, owner, now)
	} else {
		dead := IsPermanent(err) || j.Attempts >= j.MaxAttempts
		outcome = OutcomeFailed
		if dead {
			outcome = OutcomeDead
		}
		ok, recErr = fail(rec, r.db, j, owner, err, dead, now.Add(r.backoff(j.Attempts)), now)
		if dead {
			log.Error("job is dead: staff can retry it with `portal jobs retry`", "err", err)
		} else {
			log.Warn("job failed; it will be retried", "err", err)
		}
	}
	switch {
	case recErr != nil:
		log.Error("recording the job's outcome failed; it runs again when its lease expires", "outcome", outcome, "err", recErr)
	case !ok:
		log.Warn("the job's lease expired before it finished; another attempt's outcome counts", "outcome", outcome)
	}
	if r.cfg.Observer != nil {
		r.cfg.Observer.JobDone(j.Kind, outcome, took)
	}
}

// call runs the handler, turning a panic into a failure of the job.
func (r *Runner) call(ctx context.Context, j *Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	h, ok := r.handlers[j.Kind]
	if !ok {
		return Permanent(fmt.Errorf("no handler for job kind %q", j.Kind))
	}
	return h(ctx, j)
}

// Run runs the workers and schedules until ctx ends, then waits for the
// jobs in hand to finish (each within its lease) and returns.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if len(r.schedules) > 0 {
		wg.Go(func() { r.runSchedules(ctx) })
	}
	for range r.cfg.Workers {
		wg.Go(func() { r.worker(ctx) })
	}
	wg.Wait()
}

func (r *Runner) worker(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := r.Work(ctx, 1)
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("claiming jobs failed; retrying", "err", err)
		}
		if n > 0 && err == nil {
			continue // more may be due
		}
		// Idle: wait a poll interval, give or take a fifth, so that the
		// workers of many instances spread out.
		wait := r.cfg.Poll*4/5 + time.Duration(r.jitter(int64(r.cfg.Poll*2/5)+1))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// runSchedules enqueues the schedules' jobs at start and every minute (a
// period's job is enqueued within a minute of its start).
func (r *Runner) runSchedules(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if err := r.EnqueueSchedules(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("enqueueing scheduled jobs failed; retrying in a minute", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// PruneKind is the kind of the daily job that deletes old succeeded jobs.
const PruneKind = "jobs.prune"

// KeepSucceeded has the cluster delete succeeded jobs once a day when they
// finished more than keep ago, so the table holds what is pending or
// failed plus a recent history.
func (r *Runner) KeepSucceeded(keep time.Duration) {
	r.Every(PruneKind, 24*time.Hour)
	r.Handle(PruneKind, func(ctx context.Context, _ *Job) error {
		n, err := Prune(ctx, r.db, r.cfg.Now().Add(-keep))
		if err == nil && n > 0 {
			r.cfg.Logger.Info("pruned succeeded jobs", "count", n, "older_than", keep)
		}
		return err
	})
}
