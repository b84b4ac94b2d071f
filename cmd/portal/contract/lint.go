package contract

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// LintSummary counts what the spec's error-contract section measured
// (403 published for 6 of 85 guarded operations; every DELETE publishing
// 200), so a team can watch the numbers fall.
type LintSummary struct {
	Operations int `json:"operations"`
	// Secured operations require a security scheme.
	Secured        int `json:"secured"`
	Publishing401  int `json:"publishing401"`
	Publishing403  int `json:"publishing403"`
	Deletes        int `json:"deletes"`
	Deletes200     int `json:"deletesPublishing200"`
	Deletes204     int `json:"deletesPublishing204"`
	StatusNameOnly int `json:"statusNameDescriptions"`
}

// LintReport is the result of Lint.
type LintReport struct {
	Spec     string      `json:"spec"`
	Version  string      `json:"version"`
	Summary  LintSummary `json:"summary"`
	Findings []Finding   `json:"findings"`
	Errors   int         `json:"errors"`
}

// Failed reports whether a convention was broken (exit status 1).
func (r *LintReport) Failed() bool { return r.Errors > 0 }

// methodOrder is the order operations are reported in, per path.
var methodOrder = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
	http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace, "QUERY"}

// Lint applies the spec's conventions for published error contracts:
// a DELETE restates its success code (204, not 200), an operation that
// requires a security scheme documents 401 or 403, and an error response
// describes the failed condition rather than restating the status name.
func Lint(spec *Spec) *LintReport {
	doc := spec.Doc
	r := &LintReport{Spec: spec.Source, Findings: []Finding{}}
	if doc.Info != nil {
		r.Version = doc.Info.Version
	}
	if doc.Paths == nil {
		return r
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, path := range keys {
		item := paths[path]
		if item == nil {
			continue
		}
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Slice(methods, func(i, j int) bool { return methodRank(methods[i]) < methodRank(methods[j]) })
		for _, method := range methods {
			if op := ops[method]; op != nil {
				r.lintOperation(doc, method+" "+path, method, op)
			}
		}
	}
	r.Errors = countErrors(r.Findings)
	return r
}

func methodRank(m string) int {
	if i := slices.Index(methodOrder, m); i >= 0 {
		return i
	}
	return len(methodOrder)
}

func (r *LintReport) lintOperation(doc *openapi3.T, name, method string, op *openapi3.Operation) {
	r.Summary.Operations++
	responses := map[string]*openapi3.Response{}
	if op.Responses != nil {
		for code, ref := range op.Responses.Map() {
			responses[strings.ToUpper(code)] = resolveResponse(doc, ref)
		}
	}
	has := func(code string) bool { _, ok := responses[code]; return ok }
	if has("401") {
		r.Summary.Publishing401++
	}
	if has("403") {
		r.Summary.Publishing403++
	}

	if method == http.MethodDelete {
		r.Summary.Deletes++
		if has("200") {
			r.Summary.Deletes200++
		}
		if has("204") {
			r.Summary.Deletes204++
		}
		if has("200") && !has("204") {
			r.Findings = append(r.Findings, Finding{Rule: RuleDelete200, Severity: SeverityError, Operation: name, Status: "200",
				Message: fmt.Sprintf("%s publishes 200 and no 204: a DELETE that returns no content publishes 204 (restate the success code in the annotation)", name)})
		}
	}

	if requiresSecurity(doc, op) {
		r.Summary.Secured++
		if !has("401") && !has("403") && !has("4XX") {
			r.Findings = append(r.Findings, Finding{Rule: RuleSecuredNo401or403, Severity: SeverityError, Operation: name,
				Message: fmt.Sprintf("%s requires a security scheme and documents neither 401 nor 403: say when the caller is not authenticated or not allowed", name)})
		}
	}

	codes := make([]string, 0, len(responses))
	for code := range responses {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		if !isErrorStatus(code) {
			continue
		}
		var desc string
		if resp := responses[code]; resp != nil && resp.Description != nil {
			desc = *resp.Description
		}
		if restatesStatusName(desc) {
			r.Summary.StatusNameOnly++
			r.Findings = append(r.Findings, Finding{Rule: RuleStatusNameDescription, Severity: SeverityError, Operation: name, Status: code,
				Message: fmt.Sprintf("%s: the %s response is described as %q, which restates the status name: describe the failed condition (%s)", name, code, desc, conditionExample(code))})
		}
	}
}

// conditionExample shows, per status, what describing the condition means.
func conditionExample(code string) string {
	switch code {
	case "400":
		return `for example "the body is not JSON, or a field is missing; errors names each"`
	case "401":
		return `for example "no valid bearer token or API key was sent"`
	case "403":
		return `for example "the caller's organisation does not own the event"`
	case "404":
		return `for example "no event has this id"`
	case "409":
		return `for example "the event changed since it was read"`
	case "422":
		return `for example "the values break a business rule; errors names each"`
	}
	return "when does the operation answer it?"
}

// resolveResponse follows a response $ref by name when the loader could
// not resolve the document.
func resolveResponse(doc *openapi3.T, ref *openapi3.ResponseRef) *openapi3.Response {
	if ref == nil {
		return nil
	}
	if ref.Value != nil || ref.Ref == "" || doc.Components == nil {
		return ref.Value
	}
	const prefix = "#/components/responses/"
	if name, ok := strings.CutPrefix(ref.Ref, prefix); ok {
		if r := doc.Components.Responses[name]; r != nil {
			return r.Value
		}
	}
	return nil
}

// requiresSecurity: the operation's security (or else the document's) has
// at least one requirement and none of them is empty ({} means anonymous
// access is allowed).
func requiresSecurity(doc *openapi3.T, op *openapi3.Operation) bool {
	reqs := doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	if len(reqs) == 0 {
		return false
	}
	for _, req := range reqs {
		if len(req) == 0 {
			return false
		}
	}
	return true
}

func isErrorStatus(code string) bool {
	if code == "4XX" || code == "5XX" {
		return true
	}
	n, err := strconv.Atoi(code)
	return err == nil && n >= 400 && n <= 599
}

// statusNames are descriptions that say only which status it is: every
// reason phrase, and the words generators and annotations use instead.
var statusNames = func() map[string]bool {
	names := map[string]bool{"": true, "error": true, "client error": true, "server error": true,
		"unauthorised": true, "failure": true, "failed": true, "default response": true, "exception": true}
	for code := 100; code < 600; code++ {
		if t := http.StatusText(code); t != "" {
			names[normaliseDescription(t)] = true
		}
	}
	return names
}()

// restatesStatusName reports a description such as "Forbidden",
// "403 Forbidden", "NOT_FOUND" or "Not found." that names a status and
// says nothing of the condition.
func restatesStatusName(desc string) bool {
	return statusNames[normaliseDescription(desc)]
}

// normaliseDescription lower-cases, turns every run of characters other
// than letters into one space, and drops a leading "http" and status code.
func normaliseDescription(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') && r <= 0x7f })
	for len(words) > 0 && words[0] == "http" {
		words = words[1:]
	}
	return strings.Join(words, " ")
}
