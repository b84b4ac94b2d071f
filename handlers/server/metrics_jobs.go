package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"portal/engine/clock"
	"portal/engine/jobs"
)

// jobCollector reads the job queue's depth and age from the database at
// each scrape: the queue is shared by the cluster, so every instance
// reports the same numbers (aggregate with max, not sum).
type jobCollector struct {
	db     bun.IDB
	depth  *prometheus.Desc
	oldest *prometheus.Desc
	errors prometheus.Counter
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.oldest
	c.errors.Describe(ch)
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	stats, err := jobs.Stats(ctx, c.db, clock.Now())
	if err != nil {
		c.errors.Inc()
	}
	for _, s := range stats {
		for _, st := range []jobs.State{jobs.StateQueued, jobs.StateRunning, jobs.StateFailed, jobs.StateDead} {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(s.Count[st]), s.Kind, string(st))
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.OldestDue.Seconds(), s.Kind)
	}
	c.errors.Collect(ch)
}

// WatchJobs exports the job queue (read from db at each scrape) and makes
// m the runner's observer of attempts: register it before the runner
// starts, as jobs.Config.Observer.
func (m *Metrics) WatchJobs(db bun.IDB) {
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "portal_job_attempts_total",
		Help: "Job attempts run by this instance, by kind and outcome (succeeded; failed: retried later; dead).",
	}, []string{"kind", "outcome"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "portal_job_duration_seconds",
		Help:    "Time a job attempt took on this instance, by kind.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"kind"})
	m.reg.MustRegister(m.jobRuns, m.jobDuration, &jobCollector{
		db: db,
		depth: prometheus.NewDesc("portal_jobs", "Jobs in the shared queue by kind and state (queued, running, failed: waiting to retry, dead: needs staff).",
			[]string{"kind", "state"}, nil),
		oldest: prometheus.NewDesc("portal_jobs_oldest_due_seconds", "How long the oldest due job of a kind has waited to run (0: none due).",
			[]string{"kind"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "portal_jobs_scrape_errors_total", Help: "Scrapes that could not read the job queue."}),
	})
}

// JobDone counts a job attempt; it makes Metrics a jobs.Observer.
func (m *Metrics) JobDone(kind, outcome string, took time.Duration) {
	if m.jobRuns == nil {
		return
	}
	m.jobRuns.WithLabelValues(kind, outcome).Inc()
	m.jobDuration.WithLabelValues(kind).Observe(took.Seconds())
}
