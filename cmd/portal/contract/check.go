package contract

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// DefaultMinPaths is the spec's extraction guard: a published description
// with fewer paths probably lost controllers on the way.
const DefaultMinPaths = 30

// DefaultFilePattern is where openapi-generator's typescript-fetch
// generator writes a model: models/<Name>.ts under its output folder, the
// name camelised (OrderDTO stays OrderDTO, order_line becomes OrderLine).
const DefaultFilePattern = "models/{Name}.ts"

// maxCycles bounds the cycles a report lists; they are notes, not findings.
const maxCycles = 20

// CheckOptions are the inputs of Check besides the description.
type CheckOptions struct {
	// Models is the allow-list: the component schemas a client generates.
	Models []string
	// GeneratedDir, when set, is the generator's output folder: every
	// listed model must have produced a file there.
	GeneratedDir string
	// FilePattern is the path of a model's file under GeneratedDir:
	// {name} is the model name as written, {Name} camelised, * any part of
	// a file name, ** any folders. Empty means DefaultFilePattern.
	FilePattern string
	// MinPaths is the extraction guard (the spec's is DefaultMinPaths);
	// 0 turns it off.
	MinPaths int
	// Strict makes the extraction guard an error instead of a warning.
	Strict bool
}

// CheckReport is the result of Check.
type CheckReport struct {
	Spec     string `json:"spec"`
	OpenAPI  string `json:"openapi"`
	Version  string `json:"version"`
	Paths    int    `json:"paths"`
	MinPaths int    `json:"minPaths"`
	// Models is the allow-list as given (duplicates removed).
	Models []string `json:"models"`
	// Reachable counts the component schemas reachable from the listed
	// models, the listed ones included.
	Reachable int `json:"reachable"`
	// Cycles are reference cycles among the reachable schemas. They are
	// legal and every generator handles them; they are listed because a
	// closure tool that does not expect them loops forever.
	Cycles      [][]string `json:"cycles,omitempty"`
	CyclesTotal int        `json:"cyclesTotal,omitempty"`
	Findings    []Finding  `json:"findings"`
	Errors      int        `json:"errors"`
	Warnings    int        `json:"warnings"`
}

// Failed reports whether an error was found (exit status 1).
func (r *CheckReport) Failed() bool { return r.Errors > 0 }

// Check holds the allow-list of generated models to the spec's rule: it
// must be closed under $ref, name only component schemas, and (with a
// generated folder) have produced a file per model. It also applies the
// extraction guard on the number of paths. The error is for a generated
// folder that cannot be read.
func Check(spec *Spec, opts CheckOptions) (*CheckReport, error) {
	if opts.FilePattern == "" {
		opts.FilePattern = DefaultFilePattern
	}
	doc := spec.Doc
	r := &CheckReport{Spec: spec.Source, OpenAPI: doc.OpenAPI, Paths: spec.PathCount(), MinPaths: opts.MinPaths,
		Models: dedupe(opts.Models), Findings: []Finding{}}
	if doc.Info != nil {
		r.Version = doc.Info.Version
	}
	var schemas openapi3.Schemas
	if doc.Components != nil {
		schemas = doc.Components.Schemas
	}
	g := &schemaGraph{schemas: schemas, edges: map[string][]edge{}}

	listed := map[string]bool{}
	var roots []string
	for _, m := range r.Models {
		listed[m] = true
		if _, ok := schemas[m]; ok {
			roots = append(roots, m)
			continue
		}
		msg := fmt.Sprintf("%s is not a component schema of the description: it generates nothing", m)
		if alt := sameIgnoringCase(schemas, m); alt != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", alt)
		}
		r.Findings = append(r.Findings, Finding{Rule: RuleUnknownModel, Severity: SeverityError, Model: m, Message: msg})
	}

	closureFindings, reachable := g.closure(roots, listed)
	r.Findings = append(r.Findings, closureFindings...)
	r.Reachable = len(reachable)
	r.Cycles, r.CyclesTotal = g.cycles(reachable)

	if spec.Unresolved != nil && !slices.ContainsFunc(closureFindings, func(f Finding) bool { return f.Rule == RuleDanglingRef }) {
		r.Findings = append(r.Findings, Finding{Rule: RuleUnresolved, Severity: SeverityError,
			Message: fmt.Sprintf("the description's references do not resolve, so generators fail on it: %v", spec.Unresolved)})
	}

	if opts.GeneratedDir != "" {
		missing, err := missingFiles(opts.GeneratedDir, opts.FilePattern, roots)
		if err != nil {
			return nil, err
		}
		r.Findings = append(r.Findings, missing...)
	}

	if opts.MinPaths > 0 && r.Paths < opts.MinPaths {
		sev := SeverityWarning
		if opts.Strict {
			sev = SeverityError
		}
		r.Findings = append(r.Findings, Finding{Rule: RuleFewPaths, Severity: sev,
			Message: fmt.Sprintf("the description has %d paths, fewer than %d: the extraction probably went wrong (were the profiles dev and api-docs both active, so that every controller was loaded?)", r.Paths, opts.MinPaths)})
	}
	r.Errors = countErrors(r.Findings)
	r.Warnings = len(r.Findings) - r.Errors
	return r, nil
}

// edge is a reference from one component schema to another.
type edge struct {
	via string // where in the source schema, e.g. "OrderLineDTO.product"
	to  string // the component schema named; "" when ref names none
	ref string // the $ref as written
}

// schemaGraph is the reference graph between component schemas, built
// lazily: a backend with hundreds of schemas needs only the reachable ones.
type schemaGraph struct {
	schemas openapi3.Schemas
	edges   map[string][]edge
}

func (g *schemaGraph) from(name string) []edge {
	if es, ok := g.edges[name]; ok {
		return es
	}
	w := &schemaWalker{inline: map[*openapi3.Schema]bool{}}
	w.walk(g.schemas[name], name)
	g.edges[name] = w.out
	return w.out
}

// closure walks breadth first from the listed models, so each report
// carries the shortest chain. It goes on through unlisted schemas: what
// they reach must be listed too.
func (g *schemaGraph) closure(roots []string, listed map[string]bool) ([]Finding, map[string]bool) {
	type item struct {
		name  string
		chain []string
	}
	findings := []Finding{}
	seen := map[string]bool{}
	dangling := map[string]bool{}
	var queue []item
	for _, m := range roots {
		if !seen[m] {
			seen[m] = true
			queue = append(queue, item{m, []string{m}})
		}
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, e := range g.from(it.name) {
			target := e.to
			if target == "" {
				target = e.ref
			}
			chain := append(slices.Clone(it.chain[:len(it.chain)-1]), e.via, target)
			if _, ok := g.schemas[e.to]; !ok || e.to == "" {
				if !dangling[e.ref] {
					dangling[e.ref] = true
					findings = append(findings, Finding{Rule: RuleDanglingRef, Severity: SeverityError, Model: e.to, Chain: chain,
						Message: fmt.Sprintf("%s: $ref %q names no component schema (a dangling reference: a typed client does not compile, a dynamic one fails at first use)", strings.Join(chain, " -> "), e.ref)})
				}
				continue
			}
			if seen[e.to] {
				continue
			}
			seen[e.to] = true
			if !listed[e.to] {
				findings = append(findings, Finding{Rule: RuleUnlistedModel, Severity: SeverityError, Model: e.to, Chain: chain,
					Message: fmt.Sprintf("%s: %s is not listed", strings.Join(chain, " -> "), e.to)})
			}
			queue = append(queue, item{e.to, chain})
		}
	}
	return findings, seen
}

// cycles finds the reference cycles among the reachable schemas by a depth
// first walk: each edge back to a schema on the walk closes one.
func (g *schemaGraph) cycles(reachable map[string]bool) ([][]string, int) {
	names := make([]string, 0, len(reachable))
	for n := range reachable {
		names = append(names, n)
	}
	sort.Strings(names)
	const (
		onWalk = 1
		done   = 2
	)
	state := map[string]int{}
	var (
		walk  []string // schemas on the walk
		vias  []string // vias[i] leads from walk[i] to walk[i+1]
		found [][]string
		total int
		visit func(string)
	)
	visit = func(name string) {
		state[name] = onWalk
		walk = append(walk, name)
		for _, e := range g.from(name) {
			if _, ok := g.schemas[e.to]; !ok {
				continue
			}
			switch state[e.to] {
			case 0:
				vias = append(vias, e.via)
				visit(e.to)
				vias = vias[:len(vias)-1]
			case onWalk:
				total++
				if len(found) < maxCycles {
					i := slices.Index(walk, e.to)
					c := append(slices.Clone(vias[i:]), e.via, e.to)
					found = append(found, c)
				}
			}
		}
		walk = walk[:len(walk)-1]
		state[name] = done
	}
	for _, n := range names {
		if state[n] == 0 {
			visit(n)
		}
	}
	return found, total
}

// schemaWalker collects the component references of one schema, with
// where they sit in it.
type schemaWalker struct {
	out []edge
	// inline guards against cycles through references that are not
	// component schemas (and so are followed inline).
	inline map[*openapi3.Schema]bool
}

func (w *schemaWalker) walk(ref *openapi3.SchemaRef, at string) {
	if ref == nil {
		return
	}
	if ref.Ref != "" {
		if name, ok := componentName(ref.Ref); ok {
			w.out = append(w.out, edge{via: at, to: name, ref: ref.Ref})
			return
		}
		if ref.Value == nil {
			w.out = append(w.out, edge{via: at, ref: ref.Ref})
			return
		}
	}
	s := ref.Value
	if s == nil || w.inline[s] {
		return
	}
	w.inline[s] = true
	defer delete(w.inline, s)

	for _, k := range sortedKeys(s.Properties) {
		w.walk(s.Properties[k], at+"."+k)
	}
	w.walk(s.Items, at+"[]")
	w.walk(s.AdditionalProperties.Schema, at+"{}")
	for i, sub := range s.AllOf {
		w.walk(sub, fmt.Sprintf("%s.allOf[%d]", at, i))
	}
	for i, sub := range s.OneOf {
		w.walk(sub, fmt.Sprintf("%s.oneOf[%d]", at, i))
	}
	for i, sub := range s.AnyOf {
		w.walk(sub, fmt.Sprintf("%s.anyOf[%d]", at, i))
	}
	w.walk(s.Not, at+".not")
	if d := s.Discriminator; d != nil {
		keys := make([]string, 0, len(d.Mapping))
		for k := range d.Mapping {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m := d.Mapping[k]
			target := m.Ref
			if name, ok := mappingName(target); ok {
				target = "#/components/schemas/" + url.PathEscape(name)
			}
			w.walk(&openapi3.SchemaRef{Ref: target, Value: m.Value}, fmt.Sprintf("%s.discriminator[%s]", at, k))
		}
	}
	// OpenAPI 3.1 (JSON Schema 2020-12) keywords that hold schemas.
	for i, sub := range s.PrefixItems {
		w.walk(sub, fmt.Sprintf("%s.prefixItems[%d]", at, i))
	}
	w.walk(s.Contains, at+".contains")
	w.walk(s.PropertyNames, at+".propertyNames")
	w.walk(s.If, at+".if")
	w.walk(s.Then, at+".then")
	w.walk(s.Else, at+".else")
	w.walk(s.UnevaluatedItems.Schema, at+".unevaluatedItems")
	w.walk(s.UnevaluatedProperties.Schema, at+".unevaluatedProperties")
	w.walk(s.ContentSchema, at+".contentSchema")
	for _, k := range sortedKeys(s.PatternProperties) {
		w.walk(s.PatternProperties[k], at+".patternProperties["+k+"]")
	}
	for _, k := range sortedKeys(s.DependentSchemas) {
		w.walk(s.DependentSchemas[k], at+".dependentSchemas["+k+"]")
	}
	for _, k := range sortedKeys(s.Defs) {
		w.walk(s.Defs[k], at+".$defs["+k+"]")
	}
}

const schemasPrefix = "#/components/schemas/"

// componentName is the component schema a $ref names: the first segment
// after #/components/schemas/ (JSON pointer and URL escapes undone).
func componentName(ref string) (string, bool) {
	i := strings.Index(ref, schemasPrefix)
	if i < 0 {
		return "", false
	}
	name := ref[i+len(schemasPrefix):]
	if j := strings.IndexByte(name, '/'); j >= 0 {
		name = name[:j]
	}
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	return name, name != ""
}

// mappingName reads a discriminator mapping value written as a bare
// schema name, which OpenAPI allows besides a $ref.
func mappingName(v string) (string, bool) {
	if v == "" || strings.ContainsAny(v, "#/") {
		return "", false
	}
	return v, true
}

func sortedKeys(m openapi3.Schemas) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sameIgnoringCase(schemas openapi3.Schemas, name string) string {
	for _, k := range sortedKeys(schemas) {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	return ""
}

func dedupe(names []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// missingFiles reports the models that have no file under dir.
func missingFiles(dir, pattern string, models []string) ([]Finding, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("generated folder: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("generated folder: %s is not a folder", dir)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generated folder: %w", err)
	}
	var findings []Finding
	for _, m := range models {
		re, err := patternRegexp(pattern, m)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(files, re.MatchString) {
			findings = append(findings, Finding{Rule: RuleMissingFile, Severity: SeverityError, Model: m,
				Message: fmt.Sprintf("%s produced no file: nothing under %s matches %s", m, dir, expandPattern(pattern, m))})
		}
	}
	return findings, nil
}

// ValidateFilePattern reports a pattern that names no model.
func ValidateFilePattern(pattern string) error {
	if !strings.Contains(pattern, "{name}") && !strings.Contains(pattern, "{Name}") {
		return errors.New("the file pattern must contain {name} or {Name}")
	}
	_, err := patternRegexp(pattern, "X")
	return err
}

func expandPattern(pattern, model string) string {
	return strings.NewReplacer("{name}", model, "{Name}", camelise(model)).Replace(pattern)
}

// patternRegexp turns a file pattern for one model into a regular
// expression over slash-separated paths relative to the generated folder.
func patternRegexp(pattern, model string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for rest := pattern; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "{name}"):
			b.WriteString(regexp.QuoteMeta(model))
			rest = rest[len("{name}"):]
		case strings.HasPrefix(rest, "{Name}"):
			b.WriteString(regexp.QuoteMeta(camelise(model)))
			rest = rest[len("{Name}"):]
		case strings.HasPrefix(rest, "**/"):
			b.WriteString("(?:[^/]+/)*")
			rest = rest[3:]
		case rest[0] == '*':
			b.WriteString("[^/]*")
			rest = rest[1:]
		case rest[0] == '?':
			b.WriteString("[^/]")
			rest = rest[1:]
		default:
			b.WriteString(regexp.QuoteMeta(rest[:1]))
			rest = rest[1:]
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// camelise is the class name openapi-generator gives a model: the parts
// between non-alphanumeric characters, each with its first letter upper
// case, the rest as written.
func camelise(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
