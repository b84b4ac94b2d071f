package definition

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
)

// Process definitions on the staff setup page: the versions of each key,
// one version's steps as members see them, a new version imported (it is
// active at once, as with the admin API and `portal definitions import`),
// and an earlier version made the one new registrations use again
// (SetDefinitionActive with DefinitionUse).

// Version loads one version of the organisation's with its steps
// and their options.
func (s *Service) Version(ctx context.Context, orgID, id int64) (_ *engine.ProcessDefinition, err error) {
	def, err := LoadDefinition(ctx, s.DB(), id)
	if err != nil {
		return nil, err
	}
	if def.OrganisationID != orgID {
		return nil, engine.Errorf(engine.CodeNotFound, "definition not found")
	}
	return def, nil
}

// StaffImportDefinition stores spec as a new version for the organisation
// (whatever organisation the document names), audited.
func (s *Service) StaffImportDefinition(ctx context.Context, actor engine.Actor, orgID int64, spec *Spec) (ImportResult, error) {
	spec.OrganisationID = orgID
	return importDefinition(ctx, s.DB(), spec, func(ctx context.Context, tx bun.Tx, res ImportResult) error {
		if res.Unchanged {
			return nil
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "definition.import", TargetType: "definition",
			TargetID: fmt.Sprint(res.DefinitionID), After: map[string]any{"key": spec.Key, "version": res.Version}})
	})
}
