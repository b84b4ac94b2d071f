package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"portal/engine"
	"portal/engine/clock"
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
	ctx, now := context.Background(), clock.Now()
	jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "membership_confirmation", DedupKey: "outbox:order:1"})
	jobs.Enqueue(ctx, db, now, jobs.Spec{Kind: "archive", MaxAttempts: 1})
	r := jobs.New(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
	serverAnswer := "550 5.1.1 <alex@example.org>: Recipient address rejected: User unknown in virtual mailbox table (the end)"
	r.Handle("archive", func(context.Context, *jobs.Job) error { return errors.New("disk\nfull: " + serverAnswer) })
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
	if strings.Contains(out, "(the end)") {
		t.Errorf("the default list shows the whole error:\n%s", out)
	}
	// --wide shows the server's answer whole.
	if out, err := runCmd(t, getenv, "jobs", "list", "--wide"); err != nil || !strings.Contains(out, "disk full: "+serverAnswer) {
		t.Errorf("jobs list --wide: %v\n%s", err, out)
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

	// A scheduled job runs at once when asked, once.
	if out, err := runCmd(t, getenv, "jobs", "run", "reminders.nonsense"); err == nil || !strings.Contains(err.Error(), "reminders.unpaid") {
		t.Errorf("run of an unknown kind: %s %v", out, err)
	}
	out, err = runCmd(t, getenv, "jobs", "run", engine.KindQueueReminders)
	if err != nil || !strings.Contains(out, "queued") {
		t.Fatalf("run: %s %v", out, err)
	}
	if out, err := runCmd(t, getenv, "jobs", "run", engine.KindQueueReminders); !errors.Is(err, jobs.ErrAlreadyDue) {
		t.Errorf("a second run while the first is queued: %s %v", out, err)
	}
	if list, _ := jobs.List(ctx, db, 10, jobs.StateQueued); len(list) != 3 || list[2].Kind != engine.KindQueueReminders {
		t.Fatalf("after run, queued: %+v", list)
	}

	// --org: one organisation's work; the portal's own jobs and unknown
	// organisations are refused.
	if out, err := runCmd(t, getenv, "jobs", "run", engine.KindSuspendIdle, "--org", "7"); err == nil || !strings.Contains(err.Error(), "organisation 7 not found") {
		t.Errorf("run for an unknown organisation: %s %v", out, err)
	}
	if out, err := runCmd(t, getenv, "jobs", "run", jobs.PruneKind, "--org", "1"); err == nil || !strings.Contains(err.Error(), "without --org") {
		t.Errorf("pruning for one organisation: %s %v", out, err)
	}
	if _, err := db.NewInsert().Model(&engine.Organisation{ID: 1, Name: "Riverside"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	out, err = runCmd(t, getenv, "jobs", "run", engine.KindSuspendIdle, "--org", "1")
	if err != nil || !strings.Contains(out, "for organisation 1 only") {
		t.Fatalf("run --org: %s %v", out, err)
	}
	var payload jobs.SchedulePayload
	list, _ := jobs.List(ctx, db, 10, jobs.StateQueued)
	if len(list) != 4 || json.Unmarshal([]byte(list[3].Payload), &payload) != nil || payload.Organisation != 1 {
		t.Fatalf("after run --org, queued: %+v", list)
	}
}

func TestMailConfig(t *testing.T) {
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "smtp")
	os.WriteFile(urlFile, []byte("smtps://club:s3cret-pw@mail.example\n"), 0o600)
	keyFile := filepath.Join(dir, "dkim.pem")
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	tests := []struct {
		name    string
		getenv  func(string) string
		want    []string
		wantErr string
	}{
		{name: "no smtp: fine", getenv: env(), want: []string{"PORTAL_SMTP_URL=\n", "PORTAL_JOB_WORKERS=2"}},
		{name: "smtp from a file, masked", getenv: env("PORTAL_SMTP_URL_FILE", urlFile, "PORTAL_MAIL_FROM", "Club <club@mail.example>"),
			want: []string{"PORTAL_SMTP_URL=smtps://club:xxxxx@mail.example", "PORTAL_MAIL_FROM=Club <club@mail.example>"}},
		{name: "smtp needs a sender", getenv: env("PORTAL_SMTP_URL", "smtp://mail.example"), wantErr: "PORTAL_MAIL_FROM"},
		{name: "bad smtp url", getenv: env("PORTAL_SMTP_URL", "mailto://u:s3cret-pw@x"), wantErr: "PORTAL_SMTP_URL: must be smtp://"},
		{name: "bad sender", getenv: env("PORTAL_MAIL_FROM", "club at example"), wantErr: "PORTAL_MAIL_FROM"},
		{name: "dkim needs a selector", getenv: env("PORTAL_DKIM_KEY_FILE", keyFile, "PORTAL_MAIL_FROM", "Club <club@mail.example>"), wantErr: "PORTAL_DKIM_SELECTOR"},
		{name: "dkim complete", getenv: env("PORTAL_DKIM_KEY_FILE", keyFile, "PORTAL_DKIM_SELECTOR", "portal", "PORTAL_MAIL_FROM", "Club <club@mail.example>"),
			want: []string{"PORTAL_DKIM_KEY=****"}},
		{name: "bad dkim key", getenv: env("PORTAL_DKIM_KEY", "not a key", "PORTAL_DKIM_SELECTOR", "portal"), wantErr: "PORTAL_DKIM_KEY must be a PEM"},
		{name: "selector without key", getenv: env("PORTAL_DKIM_SELECTOR", "portal"), wantErr: "need PORTAL_DKIM_KEY"},
		{name: "bad workers", getenv: env("PORTAL_JOB_WORKERS", "0"), wantErr: "PORTAL_JOB_WORKERS"},
		{name: "archive mode default", getenv: env(), want: []string{"PORTAL_ARCHIVE_MODE=archive"}},
		{name: "archive mode remove", getenv: env("PORTAL_ARCHIVE_MODE", "remove"), want: []string{"PORTAL_ARCHIVE_MODE=remove"}},
		{name: "bad archive mode", getenv: env("PORTAL_ARCHIVE_MODE", "shred"), wantErr: "PORTAL_ARCHIVE_MODE must be archive or remove"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCmd(t, tc.getenv, "config")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("config lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "s3cret-pw") || (err != nil && strings.Contains(err.Error(), "s3cret-pw")) {
				t.Errorf("the SMTP password leaks")
			}
		})
	}

}
