package contract

import "strings"

// Severity says whether a finding fails the check.
type Severity string

const (
	// SeverityError fails the command (exit status 1).
	SeverityError Severity = "error"
	// SeverityWarning is reported and does not fail the command.
	SeverityWarning Severity = "warning"
)

// Rule names a kind of finding; they are stable, for scripts that read
// the JSON output.
type Rule string

const (
	// RuleUnlistedModel: a component schema reachable from a listed model is not listed.
	RuleUnlistedModel Rule = "unlisted-model"
	// RuleDanglingRef: a $ref reachable from a listed model names no component schema.
	RuleDanglingRef Rule = "dangling-ref"
	// RuleUnresolved: the document's references do not resolve (reported when no dangling-ref explains it).
	RuleUnresolved Rule = "unresolved-document"
	// RuleUnknownModel: a listed name is not a component schema, so it generates nothing.
	RuleUnknownModel Rule = "unknown-model"
	// RuleMissingFile: a listed model produced no generated file.
	RuleMissingFile Rule = "missing-file"
	// RuleFewPaths: fewer paths than expected; the extraction probably went wrong.
	RuleFewPaths Rule = "few-paths"

	// RuleDelete200: a DELETE publishes 200 and no 204.
	RuleDelete200 Rule = "delete-200"
	// RuleSecuredNo401or403: an operation requires a security scheme and documents neither 401 nor 403.
	RuleSecuredNo401or403 Rule = "secured-without-401-403"
	// RuleStatusNameDescription: an error response's description only restates a status name.
	RuleStatusNameDescription Rule = "status-name-description"
)

// Finding is one thing a check found.
type Finding struct {
	Rule     Rule     `json:"rule"`
	Severity Severity `json:"severity"`
	// Model is the component schema concerned (check), if any.
	Model string `json:"model,omitempty"`
	// Chain is how a listed model reaches Model, one hop per entry, for
	// example ["OrderDTO.lines[]", "OrderLineDTO.product", "ProductDTO"].
	Chain []string `json:"chain,omitempty"`
	// Operation is "METHOD /path" (lint), if any.
	Operation string `json:"operation,omitempty"`
	// Status is the response status concerned (lint), if any.
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
}

// ChainText is the chain as people read it: "A.b -> B.c -> C".
func (f Finding) ChainText() string { return strings.Join(f.Chain, " -> ") }

func countErrors(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}
