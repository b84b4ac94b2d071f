// Command portal is the registration portal: the server, its migrations,
// the demo data and definition imports, as sub-commands of one binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
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

// command is one sub-command of portal. The table of them (commands) is
// the one place that knows them: run dispatches through it, the usage
// lists it, and the help test goes through every entry, so a new command
// is dispatched, listed and its help checked by being added here.
type command struct {
	name string
	// line is the command's entry in `portal help`: what to type, then
	// what it does.
	line string
	// usage is the command's own usage: a line per sub-command.
	usage string
	// subs are the sub-commands it dispatches on (nil: none); subOptional:
	// the first may be left out (invite creates, jobs lists).
	subs        []string
	subOptional bool
	// allSettings: its help lists every shared setting (serve, whose
	// settings they are, and config, which prints them), where every other
	// command's help names its own flags and one line on where those are.
	allSettings bool
	// noSettings: it takes none of the shared settings (spec), so its
	// help does not point to them.
	noSettings bool
	run        func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands is the table of portal's sub-commands, in the order of the
// usage. A function, not a variable: the commands' own flag sets read
// their usage from it (help.go), which a variable could not be while it
// is initialised.
func commands() []command {
	return []command{
		{name: "serve", line: "serve                      run the server", allSettings: true, run: cmdServe,
			usage: "usage: portal serve [flags]   run the server (migrating first unless PORTAL_AUTO_MIGRATE=false)"},
		{name: "migrate", line: "migrate up|down|status     manage the database schema", subs: []string{"up", "down", "status"}, run: cmdMigrate,
			usage: "usage: portal migrate up|down|status"},
		{name: "seed", line: "seed demo [--members N] [--tenants]\n                             load the demo data (idempotent); --tenants adds a second club\n                             and the hostnames localhost and 127.0.0.1\n  seed federation [--clubs N] [--persons M]\n                             a federation's season for make bench-federation (idempotent)",
			subs: []string{"demo", "federation"}, run: cmdSeed, usage: seedUsage},
		{name: "orgs", line: "orgs list|create|set       organisations and their settings", usage: orgsUsage, subs: []string{"list", "create", "set"}, run: cmdOrgs},
		{name: "apikeys", line: "apikeys create|list|revoke API keys of the admin API (/api/admin/...)", usage: apikeysUsage, subs: []string{"create", "list", "revoke"}, run: cmdAPIKeys},
		{name: "staff", line: "staff add|list|remove      staff who sign in to /staff, with their roles", usage: staffUsage, subs: []string{"add", "list", "remove"}, run: cmdStaff},
		{name: "persons", line: "persons import|unlink      members from a CSV or JSON file (as POST /api/admin/persons/import)", usage: personsUsage,
			subs: []string{"import", "unlink", "export", "erase"}, run: cmdPersons},
		{name: "invite", line: "invite [list|revoke]       invitation links to a period, e-mailed through the job runner", usage: inviteUsage,
			subs: []string{"list", "revoke"}, subOptional: true, run: cmdInvite},
		{name: "webhooks", line: "webhooks add|list|update|remove|rotate|deliveries --org ID   signed event webhooks", usage: webhooksUsage,
			subs: []string{"add", "list", "update", "remove", "rotate", "deliveries", "replay"}, run: cmdWebhooks},
		{name: "export", line: "export registrations|payments --org ID --period ID [--json]   a period's export (CSV or JSON)", usage: exportUsage, run: cmdExport},
		{name: "definitions", line: "definitions import FILE    add a process definition version from YAML or JSON", usage: definitionsUsage,
			subs: []string{"import", "export"}, run: cmdDefinitions},
		{name: "jobs", line: "jobs [list] [--state S]    list queued, running, failed and dead jobs\n  jobs retry ID              run a failed or dead job again", usage: jobsUsage,
			subs: []string{"list", "retry", "run"}, subOptional: true, run: cmdJobs},
		{name: "config", line: "config                     print the effective configuration (secrets masked)", allSettings: true, run: cmdConfig,
			usage: "usage: portal config [flags]   print the effective configuration (secrets masked) and validate it"},
		{name: "payments", line: "payments capture REF --amount 184.50   record a bank transfer that arrived\n  payments import FILE [--dry-run]       capture the credits of a camt.053/054 statement",
			usage: paymentsUsage, subs: sortedKeys(paymentsCommands), run: cmdPayments},
		{name: "books", line: "books check [--org ID]     hold the money to its invariants (each violation in words)", usage: booksUsage, subs: []string{"check"}, run: cmdBooks},
		{name: "debits", line: "debits collect --org ID [--until DATE] prepare a SEPA direct-debit collection file (debits list|show|file|sent|cancel)",
			usage: debitsUsage, subs: sortedKeys(debitsCommands), run: cmdDebits},
		{name: "backup", line: "backup --out FILE          an online copy of the SQLite database (PostgreSQL: pg_dump)", usage: backupUsage, run: cmdBackup},
		{name: "restore", line: "restore FILE               put a backup in the SQLite database's place (no server running)", usage: restoreUsage, run: cmdRestore},
		{name: "spec", line: "spec check|diff|lint|export  OpenAPI contract tools (docs/CONTRACT.md)", usage: specUsage, subs: []string{"check", "diff", "lint", "export"}, noSettings: true,
			run: func(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
				return cmdSpec(ctx, args, stdout, stderr)
			}},
	}
}

const seedUsage = "usage: portal seed demo [--members N] [--tenants]\n       portal seed federation [--clubs N] [--persons M]"

// usage is portal's own usage: every command of the table.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: portal <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %s\n", c.line)
	}
	b.WriteString("\nEvery flag also reads a PORTAL_* environment variable; run \"portal serve -h\".\n" +
		"portal COMMAND -h shows a command's own usage and flags.\n")
	return b.String()
}

// lookupCommand finds a command of the table by name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run is the whole program, with its environment passed in for tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return fmt.Errorf("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage())
		return nil
	}
	c, ok := lookupCommand(args[0])
	if !ok {
		fmt.Fprint(stderr, usage())
		return fmt.Errorf("unknown command %q", args[0])
	}
	if !helpAsked(args[1:]) {
		return c.run(ctx, args[1:], getenv, stdout, stderr)
	}
	// Help goes to standard output, to be read or paged. A command whose
	// sub-command is missing (portal payments -h) shows its usage here:
	// without its sub-command it would not reach its flags.
	if len(c.subs) > 0 && !c.subOptional && (len(args) < 2 || !slices.Contains(c.subs, args[1])) {
		printCommandHelp(stdout, c, "portal "+c.name, nil)
		return nil
	}
	err := c.run(ctx, args[1:], getenv, stdout, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the command's flag set printed its help
	}
	return err
}

// cmdConfig prints the effective configuration, secrets masked, and
// validates it.
func cmdConfig(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, _, err := config.Load(newFlagSet("config", stderr), args, getenv)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, cfg.String())
	return cfg.Validate()
}

// sortedKeys are a sub-command map's names, in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
