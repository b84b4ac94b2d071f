// Command portal is the registration portal: the server, its migrations,
// the demo data and definition imports, as sub-commands of one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	// The clubs' time zones (engine.CheckTimeZone) without the host's zone
	// database: a container image may have none.
	_ "time/tzdata"

	"portal/cmd/portal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "portal:", err)
		os.Exit(exitCode(err))
	}
}

const usage = `usage: portal <command> [flags]

commands:
  serve                      run the server
  migrate up|down|status     manage the database schema
  seed demo [--members N] [--tenants]
                             load the demo data (idempotent); --tenants adds a second club
                             and the hostnames localhost and 127.0.0.1
  orgs list|create|set       organisations and their settings
  apikeys create|list|revoke API keys of the admin API (/api/admin/...)
  staff add|list|remove      staff who sign in to /staff, with their roles
  persons import|unlink      members from a CSV or JSON file (as POST /api/admin/persons/import)
  invite [list|revoke]       invitation links to a period, e-mailed through the job runner
  webhooks add|list|update|remove|rotate|deliveries --org ID   signed event webhooks
  export registrations|payments --org ID --period ID [--json]   a period's export (CSV or JSON)
  definitions import FILE    add a process definition version from YAML or JSON
  jobs [list] [--state S]    list queued, running, failed and dead jobs
  jobs retry ID              run a failed or dead job again
  config                     print the effective configuration (secrets masked)
  payments capture REF --amount 184.50   record a bank transfer that arrived
  payments import FILE [--dry-run]       capture the credits of a camt.053/054 statement
  books check [--org ID]     hold the money to its invariants (each violation in words)
  debits collect --org ID [--until DATE] prepare a SEPA direct-debit collection file (debits list|show|file|sent|cancel)
  spec check|diff|lint|export  OpenAPI contract tools (docs/CONTRACT.md)

Every flag also reads a PORTAL_* environment variable; run "portal serve -h".
`

// run is the whole program, with its environment passed in for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "seed":
		return cmdSeed(ctx, args[1:], getenv, stdout, stderr)
	case "orgs":
		return cmdOrgs(ctx, args[1:], getenv, stdout, stderr)
	case "persons":
		return cmdPersons(ctx, args[1:], getenv, stdout, stderr)
	case "apikeys":
		return cmdAPIKeys(ctx, args[1:], getenv, stdout, stderr)
	case "invite":
		return cmdInvite(ctx, args[1:], getenv, stdout, stderr)
	case "webhooks":
		return cmdWebhooks(ctx, args[1:], getenv, stdout, stderr)
	case "export":
		return cmdExport(ctx, args[1:], getenv, stdout, stderr)
	case "staff":
		return cmdStaff(ctx, args[1:], getenv, stdout, stderr)
	case "definitions":
		return cmdDefinitions(ctx, args[1:], getenv, stdout, stderr)
	case "jobs":
		return cmdJobs(ctx, args[1:], getenv, stdout, stderr)
	case "config":
		cfg, _, err := config.Load(newFlagSet("config", stderr), args[1:], getenv)
		if err != nil {
			return err
		}
		fmt.Fprint(stdout, cfg.String())
		return cfg.Validate()
	case "payments":
		return cmdPayments(ctx, args[1:], getenv, stdout, stderr)
	case "books":
		return cmdBooks(ctx, args[1:], getenv, stdout, stderr)
	case "debits":
		return cmdDebits(ctx, args[1:], getenv, stdout, stderr)
	case "spec":
		return cmdSpec(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
