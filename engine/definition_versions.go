package engine

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// An organisation's process definition versions: listed, activated and
// deactivated through the admin API. A new registration starts on the
// newest active version of its period's definition key; registrations
// already started stay on theirs whatever happens to it.

// DefinitionVersion is one stored version with how many registrations use it.
type DefinitionVersion struct {
	ProcessDefinition
	Registrations int
}

// DefinitionVersions lists orgID's definition versions, of one key or of
// all ("" key), by key and version.
func (s *Service) DefinitionVersions(ctx context.Context, orgID int64, key string) (out []DefinitionVersion, err error) {
	defer classifyUnavailable(&err)
	var defs []ProcessDefinition
	q := s.db.NewSelect().Model(&defs).Where("organisation_id = ?", orgID).Order("key ASC", "version ASC")
	if key != "" {
		q = q.Where("key = ?", key)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load definitions: %w", err)
	}
	var counts []struct {
		DefinitionID int64 `bun:"definition_id"`
		N            int   `bun:"n"`
	}
	if err := s.db.NewSelect().Model((*ProcessInstance)(nil)).ColumnExpr("definition_id, COUNT(*) AS n").
		Where("organisation_id = ?", orgID).Group("definition_id").Scan(ctx, &counts); err != nil {
		return nil, fmt.Errorf("count registrations per definition: %w", err)
	}
	used := map[int64]int{}
	for _, c := range counts {
		used[c.DefinitionID] = c.N
	}
	out = make([]DefinitionVersion, 0, len(defs))
	for _, d := range defs {
		out = append(out, DefinitionVersion{ProcessDefinition: d, Registrations: used[d.ID]})
	}
	return out, nil
}

// SetDefinitionActive activates or deactivates one version of orgID's
// definition key. Deactivating the last active version of a key that an
// open period uses is refused (conflict): its new registrations would have
// no definition to start on.
func (s *Service) SetDefinitionActive(ctx context.Context, orgID int64, key string, version int, active bool) (v *DefinitionVersion, err error) {
	defer classifyUnavailable(&err)
	err = inTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		def := new(ProcessDefinition)
		if err := tx.NewSelect().Model(def).Where("organisation_id = ? AND key = ? AND version = ?", orgID, key, version).Scan(ctx); err != nil {
			return notFoundOr(err, "definition version")
		}
		if def.Active && !active {
			others, err := tx.NewSelect().Model((*ProcessDefinition)(nil)).
				Where("organisation_id = ? AND key = ? AND active AND id <> ?", orgID, key, def.ID).Count(ctx)
			if err != nil {
				return fmt.Errorf("count active versions: %w", err)
			}
			open, err := tx.NewSelect().Model((*MembershipPeriod)(nil)).
				Where("organisation_id = ? AND definition_key = ? AND status = ?", orgID, key, PeriodOpen).Count(ctx)
			if err != nil {
				return fmt.Errorf("count open periods: %w", err)
			}
			if others == 0 && open > 0 {
				return Errorf(CodeConflict, "This is the only active version of %q and %d open period(s) use it: activate another version first.", key, open)
			}
		}
		if _, err := tx.NewUpdate().Model((*ProcessDefinition)(nil)).Set("active = ?", active).Where("id = ?", def.ID).Exec(ctx); err != nil {
			return fmt.Errorf("set definition active: %w", err)
		}
		def.Active = active
		n, err := tx.NewSelect().Model((*ProcessInstance)(nil)).Where("definition_id = ?", def.ID).Count(ctx)
		if err != nil {
			return fmt.Errorf("count registrations: %w", err)
		}
		v = &DefinitionVersion{ProcessDefinition: *def, Registrations: int(n)}
		return nil
	})
	return v, err
}
