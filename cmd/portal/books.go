package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"portal/engine"
	"portal/engine/books"
)

const booksUsage = `usage:
  portal books check [--org ID]   hold the books to their invariants (every organisation without --org)`

// errBooksViolated is check's failure when the books break a rule: the
// findings are printed, and the exit status says so to a cron job.
var errBooksViolated = errors.New("books check: the books break a rule (see above)")

// cmdBooks checks the money of one organisation or of every one
// (engine/books): each violation in words with the records involved.
func cmdBooks(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return errors.New(booksUsage)
	}
	fs := newFlagSet("books check", stderr)
	org := fs.Int64("org", 0, "the organisation to check (default: every organisation)")
	cfg, pos, err := loadConfigAround(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *org < 0 {
		return errors.New(booksUsage)
	}
	svc, closeDB, err := paymentService(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	orgs := []int64{*org}
	if *org == 0 {
		all, err := engine.ListOrganisations(ctx, svc.DB())
		if err != nil {
			return err
		}
		orgs = orgs[:0]
		for _, o := range all {
			orgs = append(orgs, o.ID)
		}
	} else if _, err := engine.LoadOrganisation(ctx, svc.DB(), *org); err != nil {
		return describeEngineError(err)
	}
	violations := 0
	for _, id := range orgs {
		findings, err := books.Check(ctx, svc, id)
		if err != nil {
			return describeEngineError(err)
		}
		for _, f := range findings {
			fmt.Fprintln(stdout, f)
		}
		violations += len(findings)
	}
	if violations > 0 {
		fmt.Fprintf(stdout, "%d violation(s) in %d organisation(s) checked\n", violations, len(orgs))
		return errBooksViolated
	}
	fmt.Fprintf(stdout, "the books of %d organisation(s) hold: every rule kept\n", len(orgs))
	return nil
}
