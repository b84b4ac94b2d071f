package contract

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for people.
func (r *CheckReport) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.printf("spec check: %s (OpenAPI %s, info.version %s), %d paths\n", r.Spec, r.OpenAPI, orDash(r.Version), r.Paths)
	p.printf("models: %d listed, %d component schemas reachable from them\n", len(r.Models), r.Reachable)
	for _, f := range r.Findings {
		p.printf("%-7s %-19s %s\n", f.Severity, f.Rule, f.Message)
	}
	for _, c := range r.Cycles {
		p.printf("note    cycle (allowed, followed once): %s\n", strings.Join(c, " -> "))
	}
	if more := r.CyclesTotal - len(r.Cycles); more > 0 {
		p.printf("note    ... and %d more cycles\n", more)
	}
	p.printf("result: %s, %s\n", plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	return p.err
}

// WriteText writes the report for people.
func (r *LintReport) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.printf("spec lint: %s (info.version %s)\n", r.Spec, orDash(r.Version))
	for _, f := range r.Findings {
		p.printf("%-7s %-23s %s\n", f.Severity, f.Rule, f.Message)
	}
	s := r.Summary
	p.printf("summary: %s, %d requiring a security scheme; 401 published by %d, 403 by %d; %s: %d publishing 200, %d publishing 204; %s restating a status name\n",
		plural(s.Operations, "operation"), s.Secured, s.Publishing401, s.Publishing403, plural(s.Deletes, "DELETE"), s.Deletes200, s.Deletes204,
		plural(s.StatusNameOnly, "error description"))
	p.printf("result: %s\n", plural(len(r.Findings), "finding"))
	return p.err
}

// WriteText writes the report for people.
func (r *DiffReport) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.printf("spec diff: %s (info.version %s) -> %s (info.version %s)\n", r.Old, orDash(r.OldVersion), r.New, orDash(r.NewVersion))
	for _, group := range []struct {
		title   string
		changes []Change
	}{{"breaking changes (major)", r.Breaking}, {"additive changes (minor)", r.Additive}, {"other changes (patch)", r.Other}} {
		p.printf("%s: %d\n", group.title, len(group.changes))
		for _, c := range group.changes {
			if c.Operation != "" {
				p.printf("  %s: %s [%s]\n", c.Operation, c.Text, c.ID)
			} else {
				p.printf("  %s [%s]\n", c.Text, c.ID)
			}
		}
	}
	p.printf("version: the changes call for %s; %s\n", bumpText(r.Required), r.Verdict)
	return p.err
}

func bumpText(b Bump) string {
	if b == BumpNone {
		return "no bump"
	}
	return "a " + string(b) + " bump"
}

// printer keeps the first write error so that reports read straight.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
