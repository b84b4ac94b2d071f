package server_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/jobs"
	"portal/handlers/server"
)

func TestJobMetrics(t *testing.T) {
	db := dbtest.SQLite(t)
	m := server.NewMetrics()
	m.WatchJobs(db)
	ctx := context.Background()
	jobs.Enqueue(ctx, db, clock.Now().Add(-2*time.Minute), jobs.Spec{Kind: "membership_confirmation"})
	jobs.Enqueue(ctx, db, clock.Now(), jobs.Spec{Kind: "archive", RunAt: clock.Now().Add(time.Hour)})
	m.JobDone("membership_confirmation", jobs.OutcomeFailed, time.Second)
	m.JobDone("membership_confirmation", jobs.OutcomeDead, time.Second)

	rec := httptest.NewRecorder()
	m.Handler("").ServeHTTP(rec, httptest.NewRequest("GET", server.MetricsPath, nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`portal_jobs{kind="membership_confirmation",state="queued"} 1`,
		`portal_jobs{kind="membership_confirmation",state="dead"} 0`,
		`portal_jobs{kind="archive",state="queued"} 1`,
		`portal_jobs_oldest_due_seconds{kind="archive"} 0`,
		`portal_job_attempts_total{kind="membership_confirmation",outcome="failed"} 1`,
		`portal_job_attempts_total{kind="membership_confirmation",outcome="dead"} 1`,
		`portal_jobs_scrape_errors_total 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(string(body), `portal_jobs_oldest_due_seconds{kind="membership_confirmation"} 1`) {
		t.Errorf("the confirmation waiting two minutes is not reported as ~120 s:\n%s", grep(string(body), "oldest"))
	}
}

func grep(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
