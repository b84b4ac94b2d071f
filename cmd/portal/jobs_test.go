package main

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"portal/engine"
	"portal/engine/jobs"
)

func TestJobsListAndRetry(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "jobs.db")
	getenv := env("PORTAL_DATABASE_URL", url)
	if out, err := runCmd(t, getenv, "migrate", "up"); err != nil {
		t.Fatal(out, err)
	}
	db, err := engine.OpenDB(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, now := context.Background(), time.Now()
	jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "membership_confirmation", DedupKey: "outbox:order:1"})
	jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "archive", MaxAttempts: 1})
	r := jobs.New(db, jobs.Config{})
	r.Handle("archive", func(context.Context, *jobs.Job) error { return errors.New("disk\nfull") })
	if n, err := r.Work(ctx, 5); err != nil || n != 1 {
		t.Fatalf("work = %d, %v", n, err)
	}

	out, err := runCmd(t, getenv, "jobs")
	if err != nil {
		t.Fatal(out, err)
	}
	for _, want := range []string{"membership_confirmation", "queued", "outbox:order:1", "archive", "dead", "1/1", "disk full"} {
		if !strings.Contains(out, want) {
			t.Errorf("jobs list lacks %q:\n%s", want, out)
		}
	}
	out, _ = runCmd(t, getenv, "jobs", "list", "--state", "dead")
	if strings.Contains(out, "membership_confirmation") || !strings.Contains(out, "archive") {
		t.Errorf("--state dead lists:\n%s", out)
	}
	if out, err := runCmd(t, getenv, "jobs", "--state", "sleeping"); err == nil {
		t.Errorf("an unknown state is accepted:\n%s", out)
	}
	dead, _ := jobs.List(ctx, db, 10, jobs.StateDead)
	id := dead[0].ID
	if out, err := runCmd(t, getenv, "jobs", "retry", "x"); err == nil {
		t.Errorf("retry x: %s", out)
	}
	if out, err := runCmd(t, getenv, "jobs", "retry", "999"); err == nil || !strings.Contains(err.Error(), "no failed or dead job") {
		t.Errorf("retry of a missing job: %s %v", out, err)
	}
	if out, err := runCmd(t, getenv, "jobs", "retry", strconv.FormatInt(id, 10)); err != nil || !strings.Contains(out, "queued again") {
		t.Fatalf("retry: %s %v", out, err)
	}
	if list, _ := jobs.List(ctx, db, 10, jobs.StateQueued); len(list) != 2 {
		t.Fatalf("after retry, %d queued jobs, want 2", len(list))
	}
}
