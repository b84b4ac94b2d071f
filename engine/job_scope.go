package engine

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/uptrace/bun"

	"portal/engine/jobs"
)

// A scheduled job run once for one organisation (`portal jobs run KIND
// --org ID`, the staff jobs page): the run's payload names the
// organisation, its handler scopes the context to it (WithOrganisation,
// as a request is scoped: jobScope), and each
// scheduled function narrows its search to that organisation's rows
// (scopeOrg). A scheduled run of the schedule names none and covers
// every organisation.

// ScopeOrg narrows q to the organisation ctx is scoped to; orgColumn is
// q's organisation column (or an expression giving it). Unscoped (the
// schedule, the command line), q covers every organisation.
func ScopeOrg(ctx context.Context, q *bun.SelectQuery, orgColumn string) *bun.SelectQuery {
	if org, ok := OrganisationOf(ctx); ok && org != 0 {
		return q.Where("? = ?", bun.Safe(orgColumn), org)
	}
	return q
}

// JobScope is ctx scoped to the organisation j's payload names, if any.
func JobScope(ctx context.Context, j *jobs.Job) context.Context {
	var p jobs.SchedulePayload
	if j != nil && json.Unmarshal([]byte(j.Payload), &p) == nil && p.Organisation != 0 {
		return WithOrganisation(ctx, p.Organisation)
	}
	return ctx
}

// CheckRunKind refuses a kind that is not scheduled, or a portal-wide
// kind for one organisation (orgID not 0).
func CheckRunKind(kind string, orgID int64) error {
	if !slices.Contains(ScheduledKinds, kind) {
		return &Error{Code: CodeValidation, Message: "Choose a scheduled job.", Fields: []FieldError{{Field: "kind", Message: "is not a scheduled job"}}}
	}
	if orgID != 0 && slices.Contains(PortalWideKinds, kind) {
		return &Error{Code: CodeValidation, Message: "This job is the portal's own: it runs for every organisation at once.",
			Fields: []FieldError{{Field: "kind", Message: "belongs to no organisation"}}}
	}
	return nil
}
