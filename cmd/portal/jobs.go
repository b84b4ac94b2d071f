package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/clock"
	"portal/engine/jobs"
	"portal/migrations"
)

// jobsUsage is the usage of `portal jobs`.
const jobsUsage = "usage: portal jobs [list] [--state queued,running,failed,dead,succeeded] [--limit N] [--wide] | portal jobs retry ID | portal jobs run KIND [--org ID]"

// cmdJobs lists the job queue, retries a failed or dead job, or runs a
// scheduled job now. Like every operator command it runs beside a serving
// portal (openDatabase); what it writes (one job row) is what the server's
// own workers write too.
func cmdJobs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("jobs", stderr)
	states := fs.String("state", "", "comma-separated states to list (default: all but succeeded)")
	limit := fs.Int("limit", 100, "list at most this many jobs")
	org := fs.Int64("org", 0, "run: only this organisation's work (default: every organisation's, as the schedule)")
	wide := fs.Bool("wide", false, "show the last error whole (e.g. the mail server's answer), not cut to 80 characters")
	action := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	cfg, rest, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := migrations.CheckCurrent(ctx, db); err != nil {
		return err
	}
	switch action {
	case "list":
		if len(rest) > 0 || *limit <= 0 {
			return errors.New(jobsUsage)
		}
		var want []jobs.State
		for s := range strings.SplitSeq(*states, ",") {
			switch st := jobs.State(strings.TrimSpace(s)); st {
			case "":
			case jobs.StateQueued, jobs.StateRunning, jobs.StateFailed, jobs.StateDead, jobs.StateSucceeded:
				want = append(want, st)
			default:
				return fmt.Errorf("unknown job state %q: want queued, running, failed, dead or succeeded", st)
			}
		}
		list, err := jobs.List(ctx, db, *limit, want...)
		if err != nil {
			return err
		}
		printJobs(stdout, list, *wide)
		return nil
	case "retry":
		if len(rest) != 1 {
			return errors.New(jobsUsage)
		}
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("job id %q is not a number", rest[0])
		}
		if err := jobs.Retry(ctx, db, id, clock.Now()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d queued again with a fresh set of attempts\n", id)
		return nil
	case "run":
		if len(rest) > 1 { // portal jobs run KIND --org ID: the flags after the kind
			if err := fs.Parse(rest[1:]); err != nil || fs.NArg() > 0 {
				return errors.New(jobsUsage)
			}
			rest = rest[:1]
		}
		if len(rest) != 1 {
			return errors.New(jobsUsage)
		}
		kind := rest[0]
		if !slices.Contains(engine.ScheduledKinds, kind) {
			return fmt.Errorf("%q is not a scheduled job kind: want one of %s", kind, strings.Join(engine.ScheduledKinds, ", "))
		}
		if err := engine.CheckRunKind(kind, *org); err != nil {
			return fmt.Errorf("%s: %s (%s are the portal's own; run them without --org)", kind, err.Error(), strings.Join(engine.PortalWideKinds, ", "))
		}
		scope := "for every organisation"
		if *org != 0 {
			if n, err := db.NewSelect().Table("organisations").Where("id = ?", *org).Count(ctx); err != nil || n == 0 {
				return fmt.Errorf("organisation %d not found (portal orgs list)", *org)
			}
			scope = fmt.Sprintf("for organisation %d only", *org)
		}
		j, err := jobs.RunNow(ctx, db, kind, clock.Now(), *org)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "job %d queued: %s runs now on a serving portal's workers, once in the cluster, %s (portal jobs list shows it)\n", j.ID, kind, scope)
		return nil
	}
	return fmt.Errorf("unknown jobs action %q; %s", action, jobsUsage)
}

// printJobs writes the jobs as a table, one line each, the last error cut
// to 80 characters, or whole when wide (a mail server's answer, say).
func printJobs(w io.Writer, list []jobs.Job, wide bool) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tATTEMPTS\tRUN AT (UTC)\tKEY\tLAST ERROR")
	for _, j := range list {
		key := ""
		if j.DedupKey != nil {
			key = *j.DedupKey
		}
		msg := strings.Join(strings.Fields(j.LastError), " ")
		if r := []rune(msg); len(r) > 80 && !wide {
			msg = string(r[:79]) + "…"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempts, j.MaxAttempts,
			j.RunAt.UTC().Format("2006-01-02 15:04:05"), key, msg)
	}
	tw.Flush()
}
