package definition

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
)

// An organisation's process definition versions: listed, activated and
// deactivated through the admin API. A new registration starts on the
// newest active version of its period's definition key; registrations
// already started stay on theirs whatever happens to it.

// Version is one stored version with how many registrations use it.
type Version struct {
	engine.ProcessDefinition
	Registrations int
}

// Versions lists orgID's definition versions, of one key or of
// all ("" key), by key and version.
func (s *Service) Versions(ctx context.Context, orgID int64, key string) (out []Version, err error) {
	var defs []engine.ProcessDefinition
	q := s.DB().NewSelect().Model(&defs).Where("organisation_id = ?", orgID).Order("key ASC", "version ASC")
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
	if err := s.DB().NewSelect().Model((*engine.ProcessInstance)(nil)).ColumnExpr("definition_id, COUNT(*) AS n").
		Where("organisation_id = ?", orgID).Group("definition_id").Scan(ctx, &counts); err != nil {
		return nil, fmt.Errorf("count registrations per definition: %w", err)
	}
	used := map[int64]int{}
	for _, c := range counts {
		used[c.DefinitionID] = c.N
	}
	out = make([]Version, 0, len(defs))
	for _, d := range defs {
		out = append(out, Version{ProcessDefinition: d, Registrations: used[d.ID]})
	}
	return out, nil
}

// Activation is what SetDefinitionActive does to a version.
type Activation int

const (
	// DefinitionActivate makes the version active; the other versions keep
	// theirs (the admin API's .../activate).
	DefinitionActivate Activation = iota
	// DefinitionDeactivate makes it inactive (the admin API's .../deactivate).
	DefinitionDeactivate
	// DefinitionUse makes it the version new registrations of its key start
	// on: it is active and the newer versions are not (the staff setup
	// page's "use this version"). Registrations begun on a newer version go
	// on with theirs.
	DefinitionUse
)

// Ref names one version of an organisation's: by its id, or
// (ID 0) by key and version number.
type Ref struct {
	ID      int64
	Key     string
	Version int
}

// SetDefinitionActive activates, deactivates or puts to use one version of
// orgID's definitions, audited as actor's. Deactivating the last active
// version of a key that an open period uses is refused (conflict): its new
// registrations would have no definition to start on.
func (s *Service) SetDefinitionActive(ctx context.Context, actor engine.Actor, orgID int64, ref Ref, change Activation) (v *Version, err error) {
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		def := new(engine.ProcessDefinition)
		q := tx.NewSelect().Model(def).Where("organisation_id = ?", orgID)
		if ref.ID != 0 {
			q = q.Where("id = ?", ref.ID)
		} else {
			q = q.Where("key = ? AND version = ?", ref.Key, ref.Version)
		}
		if err := q.Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "definition version")
		}
		before, err := definitionInUse(ctx, tx, def)
		if err != nil {
			return err
		}
		if def.Active && change == DefinitionDeactivate {
			if err := refuseLastActive(ctx, tx, def); err != nil {
				return err
			}
		}
		upd := tx.NewUpdate().Model((*engine.ProcessDefinition)(nil))
		switch change {
		case DefinitionUse:
			upd = upd.Set("active = (version <= ?)", def.Version).
				Where("organisation_id = ? AND key = ? AND (id = ? OR version > ?)", orgID, def.Key, def.ID, def.Version)
		default:
			upd = upd.Set("active = ?", change == DefinitionActivate).Where("id = ?", def.ID)
		}
		if _, err := upd.Exec(ctx); err != nil {
			return fmt.Errorf("set definition active: %w", err)
		}
		def.Active = change != DefinitionDeactivate
		after, err := definitionInUse(ctx, tx, def)
		if err != nil {
			return err
		}
		action := "definition.activate"
		if change == DefinitionDeactivate {
			action = "definition.deactivate"
		}
		if err := s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: action, TargetType: "definition",
			TargetID: fmt.Sprint(def.ID), Before: before, After: after}); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model((*engine.ProcessInstance)(nil)).Where("definition_id = ?", def.ID).Count(ctx)
		if err != nil {
			return fmt.Errorf("count registrations: %w", err)
		}
		v = &Version{ProcessDefinition: *def, Registrations: int(n)}
		return nil
	})
	return v, err
}

// definitionInUse is what the audit log keeps of a change to def: its
// key and version, whether it is active, and the version new
// registrations of its key start on (nil when none).
func definitionInUse(ctx context.Context, tx bun.IDB, def *engine.ProcessDefinition) (map[string]any, error) {
	out := map[string]any{"key": def.Key, "version": def.Version, "active": def.Active, "activeVersion": nil}
	current, err := LatestActiveDefinition(ctx, tx, def.OrganisationID, def.Key)
	switch {
	case err == nil:
		out["activeVersion"] = current.Version
	case engine.ErrorCode(err) != engine.CodeNotFound:
		return nil, err
	}
	return out, nil
}

// refuseLastActive refuses to deactivate def when it is its key's only
// active version and an open period uses the key.
func refuseLastActive(ctx context.Context, tx bun.IDB, def *engine.ProcessDefinition) error {
	others, err := tx.NewSelect().Model((*engine.ProcessDefinition)(nil)).
		Where("organisation_id = ? AND key = ? AND active AND id <> ?", def.OrganisationID, def.Key, def.ID).Count(ctx)
	if err != nil {
		return fmt.Errorf("count active versions: %w", err)
	}
	open, err := tx.NewSelect().Model((*engine.MembershipPeriod)(nil)).
		Where("organisation_id = ? AND definition_key = ? AND status = ?", def.OrganisationID, def.Key, engine.PeriodOpen).Count(ctx)
	if err != nil {
		return fmt.Errorf("count open periods: %w", err)
	}
	if others == 0 && open > 0 {
		return engine.Errorf(engine.CodeConflict, "This is the only active version of %q and %d open period(s) use it: activate another version first.", def.Key, open)
	}
	return nil
}
