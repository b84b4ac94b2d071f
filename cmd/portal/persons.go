package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/organisation"
	"portal/engine/privacy"
	"portal/relay/hashlink"
)

const personsUsage = `usage:
  portal persons import FILE.csv|FILE.json --org ID   (CSV: a header line with the columns
      externalId, firstName, lastName, dateOfBirth, email, userKeys; JSON: {"persons": [...]})
  portal persons unlink --org ID EXTERNAL-ID USER-KEY
  portal persons export --org ID PERSON-ID   (the person's data as JSON, portal-personal-data/1)
  portal persons erase --org ID [--force] PERSON-ID   (refused while a membership is active or a
      payment open, unless --force; audited as the command line)`

// cmdPersons runs the admin API's person operations from the command line,
// so that a small club can sync from a spreadsheet export.
func cmdPersons(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(personsUsage)
	}
	fs := newFlagSet("persons "+args[0], stderr)
	org := fs.Int64("org", 0, "organisation id")
	force := fs.Bool("force", false, "erase despite an active membership or an open payment")
	flags, positional := splitPositional(args[1:])
	cfg, rest, err := config.Load(fs, flags, getenv)
	if err != nil {
		return err
	}
	rest = append(rest, positional...)
	if *org <= 0 {
		return errors.New(personsUsage)
	}
	switch {
	case args[0] == "import" && len(rest) == 1:
		rows, err := readPersonFile(rest[0])
		if err != nil {
			return err
		}
		return withService(ctx, cfg, func(svc *engine.Service) error {
			rep, err := organisation.Of(svc).StaffImportPersons(ctx, *org, rows, hashlink.ValidUserKey, organisation.PersonImportOptions{Actor: &engine.CommandLine})
			if rep != nil && rep.Errors > 0 {
				for _, r := range rep.Rows {
					for _, f := range r.Errors {
						fmt.Fprintf(stderr, "%s: line %d: %s %s\n", rest[0], r.Line, f.Field, f.Message)
					}
				}
			}
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "%d created, %d updated, %d unchanged\n", rep.Created, rep.Updated, rep.Unchanged)
			return nil
		})
	case args[0] == "unlink" && len(rest) == 2:
		return withService(ctx, cfg, func(svc *engine.Service) error {
			n, err := organisation.Of(svc).StaffUnlinkPersons(ctx, engine.CommandLine, *org, []organisation.PersonLink{{ExternalID: rest[0], UserKey: rest[1]}})
			if err != nil {
				return describeEngineError(err)
			}
			fmt.Fprintf(stdout, "%d link(s) removed\n", n)
			return nil
		})
	case (args[0] == "export" || args[0] == "erase") && len(rest) == 1:
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil || id <= 0 {
			return errors.New(personsUsage)
		}
		return withService(ctx, cfg, func(svc *engine.Service) error {
			var out any
			var err error
			if args[0] == "export" {
				out, err = privacy.Of(svc).ExportPerson(ctx, *org, id)
				if err == nil { // the access log: who took whose data
					err = privacy.Of(svc).RecordAccess(ctx, engine.CommandLine, privacy.Access{OrganisationID: *org, Kind: privacy.AccessExport,
						RecordID: strconv.FormatInt(id, 10), PersonID: id})
				}
			} else {
				out, err = privacy.Of(svc).ErasePerson(ctx, engine.CommandLine, *org, id, privacy.ErasureOptions{Force: *force})
			}
			if err != nil {
				return describeEngineError(err)
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		})
	}
	return errors.New(personsUsage)
}

// readPersonFile reads an import file, CSV or JSON by its extension.
func readPersonFile(path string) ([]organisation.PersonRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".json") {
		var body struct {
			Persons []organisation.PersonRow `json:"persons"`
		}
		if err := json.NewDecoder(f).Decode(&body); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return body.Persons, nil
	}
	rows, err := organisation.ParsePersonCSV(f)
	if err != nil {
		return nil, describeEngineError(err)
	}
	return rows, nil
}

// splitPositional separates the positional arguments from the flags, so
// that `portal persons import members.csv --org 2` reads as it is written
// (the flag package stops at the first positional argument). A flag
// without "=" takes the next argument as its value, except the boolean
// --force of `persons erase`.
func splitPositional(args []string) (flags, positional []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(positional, args[i+1:]...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) && strings.TrimLeft(a, "-") != "force" {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	return flags, positional
}
