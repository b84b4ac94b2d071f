package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/uptrace/bun"
	"gopkg.in/yaml.v3"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/clock"
	"portal/engine/definition"
	"portal/engine/demodata"
	"portal/engine/organisation"
	"portal/migrations"
	"portal/relay/hashlink"
)

// openDatabase validates cfg and opens its database beside whatever else
// uses it: every operator command runs while `serve` serves the same SQLite
// file (sqlitelock.go says why that is safe and how the server hears of
// what the command changed).
func openDatabase(cfg config.Config) (db *bun.DB, closeDB func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if db, err = engine.OpenDB(cfg.DatabaseURL); err != nil {
		return nil, nil, err
	}
	return db, func() { db.Close() }, nil
}

// openDatabaseAlone validates cfg and opens its database under the SQLite
// file's lock, which a serving process holds (sqlitelock.go): migrate up
// and down, which change the schema beneath a server, refuse while one
// serves. Closing releases both.
func openDatabaseAlone(cfg config.Config) (db *bun.DB, closeDB func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	unlock, err := lockSQLite(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	if db, err = engine.OpenDB(cfg.DatabaseURL); err != nil {
		unlock()
		return nil, nil, err
	}
	return db, func() { db.Close(); unlock() }, nil
}

func cmdMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := loadConfigAround(newFlagSet("migrate", stderr), args, getenv)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("usage: portal migrate up|down|status")
	}
	open := openDatabaseAlone
	if rest[0] == "status" { // reads only: beside a server too
		open = openDatabase
	}
	db, closeDB, err := open(cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	switch rest[0] {
	case "up":
		applied, err := migrations.Up(ctx, db)
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			fmt.Fprintln(stdout, "database is up to date")
		}
		for _, name := range applied {
			fmt.Fprintln(stdout, "applied", name)
		}
	case "down":
		rolled, err := migrations.Down(ctx, db)
		if err != nil {
			return err
		}
		if len(rolled) == 0 {
			fmt.Fprintln(stdout, "nothing to roll back")
		}
		for _, name := range rolled {
			fmt.Fprintln(stdout, "rolled back", name)
		}
	case "status":
		list, err := migrations.List(ctx, db)
		if err != nil {
			return err
		}
		for _, m := range list {
			state := "pending"
			if m.Applied {
				state = "applied"
			}
			fmt.Fprintf(stdout, "%-8s %s\n", state, m.Name)
		}
	default:
		return fmt.Errorf("unknown migrate action %q: want up, down or status", rest[0])
	}
	return nil
}

func cmdSeed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "federation" {
		return cmdSeedFederation(ctx, args[1:], getenv, stdout, stderr) // seed_federation.go
	}
	fs := newFlagSet("seed", stderr)
	members := fs.Int("members", 0, "also create user keys demo-1 ... demo-N with two persons each")
	tenants := fs.Bool("tenants", false, "also a second club, and the hostnames localhost (rowing) and 127.0.0.1 (tennis)")
	if len(args) == 0 || args[0] != "demo" {
		return errors.New("usage: portal seed demo [--members N] [--tenants]")
	}
	cfg, rest, err := config.Load(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 || *members < 0 {
		return errors.New("usage: portal seed demo [--members N] [--tenants]")
	}
	db, closeDB, err := openSeedDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := demodata.SeedDemo(ctx, db, *members, clock.Now()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo data ready (user key %q, membership period %d", engine.DemoUserKey, engine.DemoPeriodID)
	if *members > 0 {
		fmt.Fprintf(stdout, ", plus demo-1 ... demo-%d", *members)
	}
	fmt.Fprintln(stdout, ")")
	if *tenants {
		if err := organisation.SeedDemoOrganisations(ctx, db, clock.Now()); err != nil {
			return err
		}
	}
	if err := printDemoStaff(ctx, cfg, db, stdout); err != nil { // staff.go
		return err
	}
	if cfg.HashSecret == "" {
		return nil
	}
	if !*tenants {
		fmt.Fprintln(stdout, "demo link:", demoLink(cfg))
		return nil
	}
	port := "8080"
	if _, p, err := net.SplitHostPort(cfg.Addr); err == nil && p != "" && p != "0" {
		port = p
	}
	hash := hashlink.Sign(cfg.HashSecret, engine.DemoUserKey)
	fmt.Fprintf(stdout, "rowing club (EUR): http://%s:%s/membership/register/%d?u=%s&h=%s\n", organisation.DemoFirstHost, port, engine.DemoPeriodID, engine.DemoUserKey, hash)
	fmt.Fprintf(stdout, "tennis club (CHF): http://%s:%s/membership/register/%d?u=%s&h=%s\n", organisation.DemoSecondHost, port, organisation.DemoSecondPeriodID, engine.DemoUserKey, hash)
	return nil
}

// openSeedDatabase opens the database for seed, migrated. With no server
// on the SQLite file (`make run`: seed, then serve) seed migrates first,
// under the file's lock as migrate does. Beside a serving process it only
// checks that the schema is current, which that server made it or checked
// at its start: seed's demo data is added, never changed (what exists is
// left alone), as an operator's command adds it, so it may run then too.
func openSeedDatabase(ctx context.Context, cfg config.Config) (db *bun.DB, closeDB func(), err error) {
	db, closeDB, err = openDatabaseAlone(cfg)
	if errors.Is(err, errSQLiteInUse) {
		if db, closeDB, err = openDatabase(cfg); err != nil {
			return nil, nil, err
		}
		if err := migrations.CheckCurrent(ctx, db); err != nil {
			closeDB()
			return nil, nil, err
		}
		return db, closeDB, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := migrations.Up(ctx, db); err != nil {
		closeDB()
		return nil, nil, err
	}
	return db, closeDB, nil
}

// demoLink is the hash link a staff e-mail would carry for the demo user.
func demoLink(cfg config.Config) string {
	return fmt.Sprintf("%s/membership/register/%d?u=%s&h=%s", cfg.BaseURL, engine.DemoPeriodID,
		url.QueryEscape(engine.DemoUserKey), hashlink.Sign(cfg.HashSecret, engine.DemoUserKey))
}

// definitionsUsage names the definitions sub-commands.
const definitionsUsage = "usage: portal definitions import FILE | portal definitions export [--json] ORGANISATION_ID KEY [VERSION]"

// cmdDefinitions imports a definition file as a new version, or exports a
// stored version (the newest by default) in the same format, conditions
// included, so that a definition can be taken from one installation,
// edited and imported again.
func cmdDefinitions(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "import" && args[0] != "export") {
		return errors.New(definitionsUsage)
	}
	fs := newFlagSet("definitions", stderr)
	asJSON := fs.Bool("json", false, "export: write JSON instead of YAML")
	cfg, rest, err := config.Load(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if args[0] == "export" {
		return exportDefinition(ctx, cfg, rest, *asJSON, stdout)
	}
	if len(rest) != 1 {
		return errors.New(definitionsUsage)
	}
	data, err := os.ReadFile(rest[0])
	if err != nil {
		return err
	}
	spec, err := definition.ParseDefinition(data)
	if err != nil {
		return err
	}
	// The file names its organisation (validated); the import is audited
	// in that organisation's log, as the staff page's and the API's are.
	var res definition.ImportResult
	err = withService(ctx, cfg, func(svc *engine.Service) error {
		res, err = definition.Of(svc).StaffImportDefinition(ctx, engine.CommandLine, spec.OrganisationID, spec)
		return err
	})
	if err != nil {
		return err
	}
	if res.Unchanged {
		fmt.Fprintf(stdout, "definition %q unchanged (version %d)\n", spec.Key, res.Version)
	} else {
		fmt.Fprintf(stdout, "imported definition %q version %d (id %d)\n", spec.Key, res.Version, res.DefinitionID)
	}
	return nil
}

// exportDefinition writes a stored definition version as YAML or JSON.
func exportDefinition(ctx context.Context, cfg config.Config, rest []string, asJSON bool, stdout io.Writer) error {
	if len(rest) < 2 || len(rest) > 3 {
		return errors.New(definitionsUsage)
	}
	orgID, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || orgID <= 0 {
		return fmt.Errorf("organisation id %q is not a positive number", rest[0])
	}
	version := 0
	if len(rest) == 3 {
		if version, err = strconv.Atoi(rest[2]); err != nil || version <= 0 {
			return fmt.Errorf("version %q is not a positive number", rest[2])
		}
	}
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := migrations.CheckCurrent(ctx, db); err != nil {
		return err
	}
	spec, err := definition.ExportDefinition(ctx, db, orgID, rest[1], version)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(spec)
	}
	enc := yaml.NewEncoder(stdout)
	enc.SetIndent(2)
	if err := enc.Encode(spec); err != nil {
		return err
	}
	return enc.Close()
}
