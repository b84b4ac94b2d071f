package engine

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Process definitions on the staff setup page: the versions of each key,
// one version's steps as members see them, a new version imported (it is
// active at once, as with the admin API and `portal definitions import`),
// and an earlier version made the one new registrations use again.

// DefinitionVersion loads one version of the organisation's with its steps
// and their options.
func (s *Service) DefinitionVersion(ctx context.Context, orgID, id int64) (_ *ProcessDefinition, err error) {
	defer classifyUnavailable(&err)
	def, err := loadDefinition(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	if def.OrganisationID != orgID {
		return nil, Errorf(CodeNotFound, "definition not found")
	}
	return def, nil
}

// StaffImportDefinition stores spec as a new version for the organisation
// (whatever organisation the document names), audited.
func (s *Service) StaffImportDefinition(ctx context.Context, actor Actor, orgID int64, spec *DefinitionSpec) (ImportResult, error) {
	spec.OrganisationID = orgID
	return importDefinition(ctx, s.db, spec, func(ctx context.Context, tx bun.Tx, res ImportResult) error {
		if res.Unchanged {
			return nil
		}
		return s.Audit(ctx, tx, actor, AuditEntry{OrganisationID: orgID, Action: "definition.import", TargetType: "definition",
			TargetID: fmt.Sprint(res.DefinitionID), After: map[string]any{"key": spec.Key, "version": res.Version}})
	})
}

// ActivateDefinition makes a version the one new registrations of its key
// use: it is active, and the newer versions are not (registrations begun
// on them go on with theirs).
func (s *Service) ActivateDefinition(ctx context.Context, actor Actor, orgID, id int64) (err error) {
	defer classifyUnavailable(&err)
	return inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		def := new(ProcessDefinition)
		if err := tx.NewSelect().Model(def).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return notFoundOr(err, "definition")
		}
		current, err := latestActiveDefinition(ctx, tx, orgID, def.Key)
		if err != nil && ErrorCode(err) != CodeNotFound {
			return err
		}
		if _, err := tx.NewUpdate().Model((*ProcessDefinition)(nil)).Set("active = (version <= ?)", def.Version).
			Where("organisation_id = ? AND key = ? AND (id = ? OR version > ?)", orgID, def.Key, def.ID, def.Version).Exec(ctx); err != nil {
			return fmt.Errorf("activate definition: %w", err)
		}
		before := map[string]any{"key": def.Key, "activeVersion": nil}
		if current != nil {
			before["activeVersion"] = current.Version
		}
		return s.Audit(ctx, tx, actor, AuditEntry{OrganisationID: orgID, Action: "definition.activate", TargetType: "definition",
			TargetID: fmt.Sprint(def.ID), Before: before, After: map[string]any{"key": def.Key, "activeVersion": def.Version}})
	})
}
