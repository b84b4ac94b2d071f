package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/clock"
	"portal/engine/demodata/federation"
	"portal/engine/staff"
)

// seedFederationUsage names the federation seed's flags.
const seedFederationUsage = "usage: portal seed federation [--clubs N] [--persons M]"

// cmdSeedFederation seeds a federation (federation.Seed): the demo
// club, N clubs with two seasons of registrations over M persons, and the
// season opening's households, for `make bench-federation`
// (docs/BENCHMARKS.md). Idempotent: clubs that exist are left alone.
func cmdSeedFederation(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("seed federation", stderr)
	clubs := fs.Int("clubs", 200, "how many clubs")
	persons := fs.Int("persons", 100000, "how many persons over all clubs")
	cfg, rest, err := config.Load(fs, args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 || *clubs < 2 || *persons < 100 {
		return errors.New(seedFederationUsage + " (at least 2 clubs and 100 persons)")
	}
	db, closeDB, err := openSeedDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	start := time.Now()
	rep, err := federation.Seed(ctx, db, federation.Size{Clubs: *clubs, Persons: *persons}, clock.Now(),
		func(line string) { fmt.Fprintln(stdout, line) })
	if err != nil {
		return err
	}
	// Each club's admin, treasurer and registrar (staff.DemoStaffEmail), as the demo's.
	if err := staff.Of(engine.NewService(db, nil)).SeedDemoStaff(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "federation ready in %s: %d clubs added (%d found), %d persons and %d registrations added, %d season-opening households added (%d found)\n",
		time.Since(start).Round(time.Millisecond), rep.ClubsAdded, rep.ClubsFound, rep.Persons, rep.Registrations, rep.OpeningAdded, rep.OpeningFound)
	return nil
}
