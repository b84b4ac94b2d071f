package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"portal/cmd/portal/contract"
	"portal/handlers/server"
)

const specUsage = `usage: portal spec <command> [flags]

commands:
  check --spec FILE|URL --models FILE|LIST [--generated DIR] [--file-pattern P]
        [--min-paths 30] [--strict] [--format text|json]
                             the model allow-list is closed under $ref, names only
                             component schemas, and (with --generated) produced a file each
  diff OLD NEW [--allow-breaking] [--require-bump] [--format text|json]
                             breaking and additive changes, and the version bump they call for
  lint FILE|URL [--format text|json]
                             the published error-contract conventions, with a summary
  export                     write this portal's OpenAPI description to standard output

Exit status: 0 clean, 1 findings, 2 could not load or bad usage. See docs/CONTRACT.md.
`

// exitError ends the program with a status other than 1: the spec
// commands answer 2 for a description that cannot be loaded or bad usage.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// exitCode is the process exit status for an error run returned.
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}

func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// findingsError is exit status 1 with a one-line summary.
func findingsError(format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf(format, args...)}
}

// cmdSpec runs `portal spec check|diff|lint|export`, the contract tools of
// docs/CONTRACT.md.
func cmdSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, specUsage)
		return usageError("spec: no command given")
	}
	var err error
	switch args[0] {
	case "check":
		err = specCheck(ctx, args[1:], stdout, stderr)
	case "diff":
		err = specDiff(ctx, args[1:], stdout, stderr)
	case "lint":
		err = specLint(ctx, args[1:], stdout, stderr)
	case "export":
		if helpAsked(args[1:]) {
			fmt.Fprint(stdout, specUsage)
			return nil
		}
		if len(args) > 1 {
			return usageError("usage: portal spec export (it takes no arguments)")
		}
		_, err = stdout.Write(server.OpenAPIDocument)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, specUsage)
		return nil
	default:
		fmt.Fprint(stderr, specUsage)
		return usageError("spec: unknown command %q", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h printed the usage
	}
	return err
}

func specCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newSpecFlagSet("check", stderr)
	source := fs.String("spec", "", "the OpenAPI description: a file or an http(s) URL, JSON or YAML")
	models := fs.String("models", "", "the models to generate: a file (one name a line, # comments) or a list (A,B or A:B)")
	generated := fs.String("generated", "", "the generator's output folder: every listed model must have produced a file there")
	pattern := fs.String("file-pattern", contract.DefaultFilePattern, "a model's file under --generated: {name} as written, {Name} camelised, * and ** globs (default: openapi-generator typescript-fetch)")
	minPaths := fs.Int("min-paths", contract.DefaultMinPaths, "warn when the description has fewer paths (the extraction probably went wrong); 0 turns the guard off")
	strict := fs.Bool("strict", false, "make the --min-paths warning an error")
	format := formatFlag(fs)
	rest, err := parseSpecFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usageError("spec check: unexpected argument %q", rest[0])
	case *source == "":
		return usageError("spec check: --spec FILE|URL is required")
	case *models == "":
		return usageError("spec check: --models FILE|LIST is required")
	case *minPaths < 0:
		return usageError("spec check: --min-paths must be 0 or more")
	}
	if err := contract.ValidateFilePattern(*pattern); err != nil {
		return usageError("spec check: --file-pattern: %v", err)
	}
	names, err := contract.ReadModels(*models)
	if err != nil {
		return usageError("spec check: --models: %v", err)
	}
	spec, err := loadSpec(ctx, *source)
	if err != nil {
		return err
	}
	report, err := contract.Check(spec, contract.CheckOptions{Models: names, GeneratedDir: *generated,
		FilePattern: *pattern, MinPaths: *minPaths, Strict: *strict})
	if err != nil {
		return usageError("spec check: %v", err)
	}
	if err := writeReport(stdout, format, report); err != nil {
		return err
	}
	if report.Failed() {
		return findingsError("spec check failed for %s (errors: %d)", *source, report.Errors)
	}
	return nil
}

func specDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newSpecFlagSet("diff", stderr)
	allowBreaking := fs.Bool("allow-breaking", false, "report breaking changes without failing")
	requireBump := fs.Bool("require-bump", false, "fail when NEW's info.version bump is smaller than the changes call for")
	format := formatFlag(fs)
	rest, err := parseSpecFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usageError("usage: portal spec diff OLD NEW [--allow-breaking] [--require-bump] [--format text|json]")
	}
	oldSpec, err := loadSpec(ctx, rest[0])
	if err != nil {
		return err
	}
	newSpec, err := loadSpec(ctx, rest[1])
	if err != nil {
		return err
	}
	report, err := contract.Diff(oldSpec, newSpec)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := writeReport(stdout, format, report); err != nil {
		return err
	}
	switch {
	case len(report.Breaking) > 0 && !*allowBreaking:
		return findingsError("spec diff failed: breaking changes: %d (pass --allow-breaking to accept them)", len(report.Breaking))
	case *requireBump && !report.Enough:
		return findingsError("spec diff failed: %s", report.Verdict)
	}
	return nil
}

func specLint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newSpecFlagSet("lint", stderr)
	format := formatFlag(fs)
	rest, err := parseSpecFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError("usage: portal spec lint FILE|URL [--format text|json]")
	}
	spec, err := loadSpec(ctx, rest[0])
	if err != nil {
		return err
	}
	report := contract.Lint(spec)
	if err := writeReport(stdout, format, report); err != nil {
		return err
	}
	if report.Failed() {
		return findingsError("spec lint failed for %s (findings: %d)", rest[0], len(report.Findings))
	}
	return nil
}

// newSpecFlagSet is the flag set of a spec command; its help is the spec
// usage, then the command's flags (help.go).
func newSpecFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	return newFlagSet("spec "+name, stderr)
}

// formatValue is the --format flag: text or json.
type formatValue string

func (f *formatValue) String() string { return string(*f) }
func (f *formatValue) Set(s string) error {
	if s != "text" && s != "json" {
		return errors.New("want text or json")
	}
	*f = formatValue(s)
	return nil
}

func formatFlag(fs *flag.FlagSet) *formatValue {
	f := formatValue("text")
	fs.Var(&f, "format", "text for people, json for machines")
	return &f
}

// parseSpecFlags parses flags given before, between or after the
// positional arguments ("portal spec diff OLD NEW --allow-breaking").
func parseSpecFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{code: 2, err: err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// loadSpec loads a description; failing that is exit status 2.
func loadSpec(ctx context.Context, source string) (*contract.Spec, error) {
	spec, err := contract.Load(ctx, source)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	return spec, nil
}

type textReport interface{ WriteText(io.Writer) error }

func writeReport(w io.Writer, format *formatValue, report textReport) error {
	if *format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return report.WriteText(w)
}
