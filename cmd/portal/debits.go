package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"portal/engine"
	"portal/engine/directdebit"
	"portal/engine/privacy"
)

const debitsUsage = `usage:
  portal debits collect --org ID [--until 2027-03-31] [--out FILE]   prepare a collection run (pain.008 file)
  portal debits list --org ID                                        the organisation's collection runs
  portal debits show RUN --org ID                                    a run's debits
  portal debits file RUN --org ID [--out FILE]                       write a run's file again, unchanged
  portal debits sent RUN --org ID                                    the bank has the file: settle its payments
  portal debits cancel RUN --org ID                                  withdraw a run that is not sent`

// debitsCommands are the sub-commands of portal debits, with whether each
// takes a run id.
var debitsCommands = map[string]bool{"collect": false, "list": false, "show": true, "file": true, "sent": true, "cancel": true}

// cmdDebits is the treasurer's SEPA direct-debit collection from the
// command line, the same runs as the staff page /staff/debits and the
// admin API /api/admin/debit-runs (engine/directdebit/debit_runs.go).
func cmdDebits(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(debitsUsage)
	}
	takesRun, known := debitsCommands[args[0]]
	if !known {
		return errors.New(debitsUsage)
	}
	fs := newFlagSet("debits "+args[0], stderr)
	org := fs.Int64("org", 0, "the organisation whose debits these are (required)")
	until := fs.String("until", "", "collect: the last due date gathered, YYYY-MM-DD (default: the first TARGET business day on or after today + 14 days)")
	out := fs.String("out", "", "collect, file: write the pain.008 file there (default: collect writes none, file writes to standard output)")
	cfg, pos, err := loadConfigAround(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if takesRun != (len(pos) == 1) || len(pos) > 1 {
		return errors.New(debitsUsage)
	}
	if *org <= 0 {
		return errors.New("debits " + args[0] + ": --org ID is required\n" + debitsUsage)
	}
	var runID int64
	if takesRun {
		if runID, err = strconv.ParseInt(pos[0], 10, 64); err != nil || runID <= 0 {
			return fmt.Errorf("debits %s: %q is not a run id (portal debits list shows them)", args[0], pos[0])
		}
	}
	var untilDate time.Time
	if *until != "" {
		if untilDate, err = time.Parse(time.DateOnly, *until); err != nil {
			return fmt.Errorf("debits collect: --until %q: want YYYY-MM-DD", *until)
		}
	}
	svc, closeDB, err := paymentService(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	switch args[0] {
	case "collect":
		run, err := directdebit.Of(svc).CollectDebits(ctx, directdebit.CollectRequest{OrganisationID: *org, Until: untilDate, Actor: engine.CommandLine})
		if err != nil {
			return describeEngineError(err)
		}
		fmt.Fprintf(stdout, "run %d (%s): %d debits, %s, due on or before %s, %s\n", run.ID, run.MessageID, run.DebitCount,
			engine.FormatMoney(run.TotalMinor, run.Currency), run.UntilOn.Format(time.DateOnly), run.FileVersion)
		printLeftOut(stdout, run.LeftOut)
		if *out != "" {
			return writeRunFile(*out, run.File, stdout, recordRunFile(ctx, svc, *org, run.ID))
		}
		fmt.Fprintf(stdout, "write its file with: portal debits file %d --org %d --out %s\n", run.ID, *org, directdebit.DebitRunFileName(run.DebitRun))
		return nil
	case "list":
		runs, err := directdebit.Of(svc).DebitRuns(ctx, *org)
		if err != nil {
			return describeEngineError(err)
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "RUN\tSTATUS\tDEBITS\tTOTAL\tUNTIL\tCREATED\tBY\tFILE")
		for _, r := range runs {
			fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, r.DebitCount, engine.FormatMoney(r.TotalMinor, r.Currency),
				r.UntilOn.Format(time.DateOnly), r.CreatedAt.UTC().Format(time.RFC3339), r.CreatedBy, directdebit.DebitRunFileName(r))
		}
		return w.Flush()
	case "show":
		d, err := directdebit.Of(svc).DebitRunByID(ctx, *org, runID)
		if err != nil {
			return describeEngineError(err)
		}
		fmt.Fprintf(stdout, "run %d (%s) %s: %d debits, %s\n", d.Run.ID, d.Run.MessageID, d.Run.Status, d.Run.DebitCount,
			engine.FormatMoney(d.Run.TotalMinor, d.Run.Currency))
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "END-TO-END ID\tSTATUS\tAMOUNT\tDUE\tSEQUENCE\tMANDATE\tHOLDER\tACCOUNT\tRETURN")
		for _, l := range d.Debits {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.EndToEndID, l.Status, engine.FormatMoney(l.AmountMinor, l.Currency),
				l.DueOn.Format(time.DateOnly), l.Sequence, l.MandateReference, l.Holder, l.MaskedIBAN, dashIfEmpty(l.ReturnCode))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		printLeftOut(stdout, d.LeftOut)
		return nil
	case "file":
		run, err := directdebit.Of(svc).DebitRunFile(ctx, *org, runID)
		if err != nil {
			return describeEngineError(err)
		}
		if *out == "" {
			if err := recordRunFile(ctx, svc, *org, runID)(); err != nil {
				return err
			}
			_, err := stdout.Write(run.File)
			return err
		}
		return writeRunFile(*out, run.File, stdout, recordRunFile(ctx, svc, *org, runID))
	case "sent":
		res, err := directdebit.Of(svc).MarkDebitRunSent(ctx, engine.CommandLine, *org, runID)
		if err != nil {
			return describeEngineError(err)
		}
		fmt.Fprintf(stdout, "run %d marked sent: %d payments settled", res.Run.ID, res.Settled)
		if res.Replayed > 0 {
			fmt.Fprintf(stdout, ", %d unchanged (settled before)", res.Replayed)
		}
		fmt.Fprintln(stdout)
		for _, p := range res.Problems {
			fmt.Fprintf(stdout, "  to check: %s\n", p)
		}
		return nil
	default: // cancel
		run, err := directdebit.Of(svc).CancelDebitRun(ctx, engine.CommandLine, *org, runID)
		if err != nil {
			return describeEngineError(err)
		}
		fmt.Fprintf(stdout, "run %d cancelled: its %d debits are due again for the next run\n", run.ID, run.DebitCount)
		return nil
	}
}

// printLeftOut names the due debits a run left out of its file, with why.
func printLeftOut(stdout io.Writer, left []directdebit.LeftOutDebit) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(stdout, "left out of the file (still due; see portal payments attention): %d\n", len(left))
	for _, l := range left {
		fmt.Fprintf(stdout, "  order %s, mandate %s (%s, %s), %s: %s\n", l.OrderReference, dashIfEmpty(l.MandateReference), l.Holder, l.MaskedIBAN,
			engine.FormatMoney(l.AmountMinor, l.Currency), l.Problem)
	}
}

// recordRunFile records, as "command line", that a run's file (every
// debtor's name and account) is read: the access log entry is written
// before the file's first byte.
func recordRunFile(ctx context.Context, svc *engine.Service, orgID, runID int64) func() error {
	return func() error {
		if err := privacy.Of(svc).RecordAccess(ctx, engine.CommandLine, privacy.DebitRunFileRead(orgID, runID)); err != nil {
			return describeEngineError(err)
		}
		return nil
	}
}

// writeRunFile writes a collection file where the operator asked, never
// over an existing file (a file handed to the bank stays as it was);
// logged records the read once the file is open, before its first byte.
func writeRunFile(path string, file []byte, stdout io.Writer, logged func() error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("debits: %w", err)
	}
	if err := logged(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if _, err := f.Write(file); err != nil {
		f.Close()
		return fmt.Errorf("debits: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("debits: %w", err)
	}
	fmt.Fprintf(stdout, "file written to %s (%d bytes)\n", path, len(file))
	return nil
}
