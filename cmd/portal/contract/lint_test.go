package contract_test

import (
	"slices"
	"testing"

	"portal/cmd/portal/contract"
)

type lintFinding struct {
	rule      contract.Rule
	operation string
	status    string
}

func TestLint(t *testing.T) {
	tests := []struct {
		name    string
		spec    *contract.Spec
		want    []lintFinding
		summary contract.LintSummary
	}{
		{
			name: "realistic backend following the conventions: clean",
			spec: mustLoad(t, "testdata/admin-backend.yaml"),
			want: []lintFinding{},
			summary: contract.LintSummary{Operations: 83, Secured: 83, Publishing401: 83, Publishing403: 72,
				Deletes: 11, Deletes200: 0, Deletes204: 11},
		},
		{
			name: "the error contract as published today",
			spec: mustLoad(t, "testdata/error-contract-broken.yaml"),
			want: []lintFinding{
				{contract.RuleStatusNameDescription, "GET /api/events/{id}", "401"},
				{contract.RuleStatusNameDescription, "GET /api/events/{id}", "403"},
				{contract.RuleStatusNameDescription, "GET /api/events/{id}", "404"},
				{contract.RuleSecuredNo401or403, "PUT /api/events/{id}", ""},
				{contract.RuleDelete200, "DELETE /api/events/{id}", "200"},
				{contract.RuleStatusNameDescription, "DELETE /api/persons/{id}", "409"},
			},
			// Secured: 5 of 7; the public list (security: []) and the calendar
			// ({} allows anonymous access) are not.
			summary: contract.LintSummary{Operations: 7, Secured: 5, Publishing401: 3, Publishing403: 3,
				Deletes: 3, Deletes200: 2, Deletes204: 2, StatusNameOnly: 4},
		},
		{
			name: "responses by reference and a 4XX range",
			spec: mustLoadData(t, `openapi: 3.0.3
info: {title: x, version: "1"}
security: [{bearer: []}]
paths:
  /things/{id}:
    delete:
      responses:
        "200": {$ref: '#/components/responses/Deleted'}
        "4XX": {$ref: '#/components/responses/ClientError'}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  responses:
    Deleted: {description: The thing was deleted.}
    ClientError: {description: Client Error}
`),
			want: []lintFinding{
				{contract.RuleDelete200, "DELETE /things/{id}", "200"},
				{contract.RuleStatusNameDescription, "DELETE /things/{id}", "4XX"},
			},
			summary: contract.LintSummary{Operations: 1, Secured: 1, Deletes: 1, Deletes200: 1, StatusNameOnly: 1},
		},
		{
			name: "a document whose references do not resolve is still linted",
			spec: mustLoadData(t, `openapi: 3.0.3
info: {title: x, version: "1"}
paths:
  /things/{id}:
    get:
      security: [{bearer: []}]
      responses:
        "200":
          description: The thing.
          content: {application/json: {schema: {$ref: '#/components/schemas/Gone'}}}
        "404": {$ref: '#/components/responses/NotFound'}
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
  responses:
    NotFound: {description: Not Found}
`),
			want: []lintFinding{
				{contract.RuleSecuredNo401or403, "GET /things/{id}", ""},
				{contract.RuleStatusNameDescription, "GET /things/{id}", "404"},
			},
			summary: contract.LintSummary{Operations: 1, Secured: 1, StatusNameOnly: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := contract.Lint(tt.spec)
			got := []lintFinding{}
			for _, f := range r.Findings {
				got = append(got, lintFinding{f.Rule, f.Operation, f.Status})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings:\n got %v\nwant %v", got, tt.want)
			}
			if r.Summary != tt.summary {
				t.Errorf("summary %+v, want %+v", r.Summary, tt.summary)
			}
			if r.Failed() != (len(tt.want) > 0) {
				t.Errorf("Failed() = %v", r.Failed())
			}
		})
	}
}

func TestLintStatusNameDescriptions(t *testing.T) {
	restating := []string{"Forbidden", "forbidden.", "403 Forbidden", "HTTP 403 - Forbidden", "NOT_FOUND", "Not Found",
		"Unauthorized", "Unauthorised", "Bad Request", "Internal Server Error", "Conflict", "Error", "", "  ", "I'm a teapot"}
	describing := []string{"The caller's organisation does not own the event.", "No event has this id.",
		"Forbidden: the caller lacks ROLE_USER.", "Not found in the caller's organisation", "Conflict with a newer version of the event"}
	for _, d := range restating {
		if !contract.RestatesStatusName(d) {
			t.Errorf("%q is not recognised as restating a status name", d)
		}
	}
	for _, d := range describing {
		if contract.RestatesStatusName(d) {
			t.Errorf("%q describes a condition but is reported", d)
		}
	}
}
