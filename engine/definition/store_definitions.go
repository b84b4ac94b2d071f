package definition

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Store functions for process definitions (process_definitions) with their
// steps (process_steps) and options (process_step_options). A version is
// written once and never changed, except for its active flag.

// LatestDefinition loads the newest version of a definition key of an organisation.
func LatestDefinition(ctx context.Context, db bun.IDB, orgID int64, key string) (*engine.ProcessDefinition, error) {
	def := new(engine.ProcessDefinition)
	err := db.NewSelect().Model(def).
		Where("organisation_id = ? AND key = ?", orgID, key).
		Order("version DESC").Limit(1).Scan(ctx)
	if err != nil {
		return nil, engine.NotFoundOr(err, "definition")
	}
	return def, nil
}

// LatestActiveDefinition loads the newest active version of a definition key of an organisation.
func LatestActiveDefinition(ctx context.Context, db bun.IDB, orgID int64, key string) (*engine.ProcessDefinition, error) {
	def := new(engine.ProcessDefinition)
	err := db.NewSelect().Model(def).
		Where("organisation_id = ? AND key = ? AND active", orgID, key).
		Order("version DESC").Limit(1).Scan(ctx)
	if err != nil {
		return nil, engine.NotFoundOr(err, "definition")
	}
	return def, nil
}

// LoadDefinition loads a definition version with its steps and their
// options, each in order.
func LoadDefinition(ctx context.Context, db bun.IDB, id int64) (*engine.ProcessDefinition, error) {
	def := new(engine.ProcessDefinition)
	err := db.NewSelect().Model(def).Where("?TableAlias.id = ?", id).
		Relation("Steps", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("order_index ASC") }).
		Relation("Steps.Options", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("order_index ASC") }).
		Scan(ctx)
	if err != nil {
		return nil, engine.NotFoundOr(err, "process definition")
	}
	return def, nil
}

// insertDefinition stores a new definition version. A unique violation
// means another import made the same version meanwhile: a conflict.
func insertDefinition(ctx context.Context, db bun.IDB, def *engine.ProcessDefinition) error {
	if _, err := db.NewInsert().Model(def).Exec(ctx); err != nil {
		if store.IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "another import of %q ran at the same time; try again", def.Key)
		}
		return fmt.Errorf("insert definition: %w", err)
	}
	return nil
}

// insertStep stores a step of a definition version and its options,
// numbered from 1 in the order given, with their labels in the default
// language lang (the other languages are in the step's Texts).
func insertStep(ctx context.Context, db bun.IDB, step *engine.ProcessStep, options []OptionSpec, lang string) error {
	if _, err := db.NewInsert().Model(step).Exec(ctx); err != nil {
		return fmt.Errorf("insert step %s: %w", step.Name, err)
	}
	if len(options) == 0 {
		return nil
	}
	opts := make([]engine.ProcessStepOption, len(options))
	for i, o := range options {
		opts[i] = engine.ProcessStepOption{StepID: step.ID, OrderIndex: i + 1, Kind: engine.OptionChoice, Value: o.Value, Label: o.Label.In(lang, "en")}
	}
	if _, err := db.NewInsert().Model(&opts).Exec(ctx); err != nil {
		return fmt.Errorf("insert options of %s: %w", step.Name, err)
	}
	return nil
}
