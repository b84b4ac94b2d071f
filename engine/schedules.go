package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/jobs"
)

// The portal's schedules: the kinds of the jobs that run on a timer on
// every instance (engine/jobs runs each period once in the cluster). The
// subject that owns a kind registers its handler (ScheduleLifecycle,
// SchedulePayments, ScheduleRetention, ...); the kinds are listed here, in
// the centre, because the operator's list (ScheduledKinds) and the
// run-once scoping (job_scope.go) need all of them.
const (
	KindSuspendIdle     = "registrations.suspend" // hourly: SuspendIdle
	KindArchiveFinished = "registrations.archive" // daily: ArchiveFinished

	KindQueueReminders = "reminders.unpaid"  // daily: the unpaid reminders
	KindQueueWelcomes  = "messages.welcome"  // hourly: welcome messages
	KindQueueExpiry    = "reminders.expiry"  // daily: memberships ending soon
	KindQueueRenewals  = "reminders.renewal" // daily: the next period's renewal prompts

	// KindReconcilePayments asks providers about attempts still pending
	// (missed webhooks), queues the pay links of commits that could not
	// reach their provider and retries refunds due.
	KindReconcilePayments = "payments.reconcile"
	// KindSettleDueDebitRuns settles the collection runs past their due
	// date and finishes settlings interrupted between batches.
	KindSettleDueDebitRuns = "debits.settle"
	// KindExpireMandates ends the mandates unused for MandateExpiryMonths.
	KindExpireMandates = "mandates.expire"

	// KindCheckBooks holds each organisation's money to its invariants
	// (engine/books) and keeps what it finds for the staff overview.
	KindCheckBooks = "books.check"

	KindApplyRetention     = "data.retention" // daily: each organisation's retention settings
	KindPruneWebhookEvents = "webhooks.prune" // daily: old delivered webhook events
)

// ScheduledKinds are the kinds of the portal's schedules, which an
// operator may also run at once (`portal jobs run KIND [--org ID]`): each
// covers every organisation, as its schedule does, or the one named
// (job_scope.go).
var ScheduledKinds = []string{KindQueueReminders, KindSuspendIdle, KindQueueRenewals, KindArchiveFinished,
	KindQueueWelcomes, KindQueueExpiry, KindReconcilePayments, KindPruneWebhookEvents, KindApplyRetention, KindSettleDueDebitRuns, KindExpireMandates,
	KindCheckBooks, jobs.PruneKind}

// PortalWideKinds are the scheduled kinds that belong to no organisation
// (pruning the portal's own tables): they run for the whole portal only.
var PortalWideKinds = []string{KindPruneWebhookEvents, jobs.PruneKind}

// CountingJob is a scheduled job that says how many things it did: the
// count is logged when it did something.
type CountingJob struct {
	Kind  string
	Every time.Duration
	Run   func(ctx context.Context, db *bun.DB, now time.Time) (int, error)
	Done  string // logged with the count
}

// ScheduleCounting registers each job's schedule and handler on r; a run
// for one organisation (`portal jobs run KIND --org ID`) is scoped to it.
func ScheduleCounting(r *jobs.Runner, db *bun.DB, now func() time.Time, log *slog.Logger, scheduled ...CountingJob) {
	for _, sc := range scheduled {
		r.Every(sc.Kind, sc.Every)
		r.Handle(sc.Kind, func(ctx context.Context, j *jobs.Job) error {
			n, err := sc.Run(JobScope(ctx, j), db, now())
			if n > 0 {
				log.Info(sc.Done, "count", n)
			}
			return err
		})
	}
}
