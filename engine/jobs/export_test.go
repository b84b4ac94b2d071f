package jobs

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Claim and Complete expose the store's claim for tests that play a worker
// which dies holding a lease.
func Claim(ctx context.Context, db bun.IDB, kinds []string, owner string, now time.Time, lease time.Duration, limit int) ([]Job, error) {
	return claim(ctx, db, kinds, owner, now, lease, limit)
}

func Complete(ctx context.Context, db bun.IDB, id int64, owner string, now time.Time) (bool, error) {
	return complete(ctx, db, id, owner, now)
}

// NoJitter makes the runner's backoff take its largest value.
func (r *Runner) NoJitter() { r.jitter = func(n int64) int64 { return n - 1 } }
