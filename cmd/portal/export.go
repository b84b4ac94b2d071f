package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/privacy"
	"portal/engine/report"
)

const exportUsage = `usage:
  portal export --org ID --period ID registrations|payments [--json]
      the period's registrations (one row per membership) or payments (one per
      attempt) as CSV (or JSON) on standard output, as GET /api/admin/periods/{id}/export/{kind}`

// cmdExport writes a period's export (engine.ExportPeriod) to stdout.
func cmdExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stderr)
	org := fs.Int64("org", 0, "organisation id")
	period := fs.Int64("period", 0, "membership period id")
	asJSON := fs.Bool("json", false, "JSON instead of CSV")
	// The kind may stand anywhere among the flags (the flag package would
	// stop at it): it is taken out first.
	var kind string
	var flags []string
	for _, a := range args {
		if kind == "" && (a == string(report.ExportRegistrations) || a == string(report.ExportPayments)) {
			kind = a
			continue
		}
		flags = append(flags, a)
	}
	cfg, rest, err := config.Load(fs, flags, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New(exportUsage)
	}
	if *org <= 0 || *period <= 0 || kind == "" {
		return errors.New(exportUsage)
	}
	return withService(ctx, cfg, func(svc *engine.Service) error {
		// Every member's data of the period: one access log entry, as
		// "command line", before the first byte.
		filter := ""
		if *asJSON {
			filter = "format=json"
		}
		out := privacy.Of(svc).LoggedWriter(ctx, stdout, engine.CommandLine, privacy.BulkRead(*org, fmt.Sprintf("periods/%d/export/%s", *period, kind), filter))
		w := report.CSVExport(out)
		if *asJSON {
			w = report.JSONExport(out)
		}
		if err := report.Of(svc).ExportPeriod(ctx, *org, *period, report.ExportKind(kind), w); err != nil {
			return describeEngineError(err)
		}
		return w.Close()
	})
}
