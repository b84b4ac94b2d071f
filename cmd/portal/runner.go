package main

import (
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/jobs"
	"portal/handlers"
)

// keepSucceededJobs is how long finished jobs stay, with their dedup keys:
// longer than any deduplicated work is enqueued again (a replayed payment
// return, a schedule's period).
const keepSucceededJobs = 30 * 24 * time.Hour

// buildRunner is the job runner of serve with every job kind's handler.
func buildRunner(cfg Config, db *bun.DB, log *slog.Logger, metrics *handlers.Metrics) *jobs.Runner {
	metrics.WatchJobs(db)
	r := jobs.New(db, jobs.Config{Workers: cfg.JobWorkers, Logger: log, Observer: metrics})
	r.KeepSucceeded(keepSucceededJobs)
	return r
}
