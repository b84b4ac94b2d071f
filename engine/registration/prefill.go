package registration

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
)

// Last season's answers as this season's starting point. When persons are
// selected who have no answers yet in a registration, each one's answers
// from the latest earlier registration of the same user key that
// registered them (committed or completed) are stored as this
// registration's answers where the question is the same: a step of the
// same name and question type in the new definition, whose rules the
// answer still passes. The member still sees and submits every step; the
// answers only fill the form, as after Back. Consents (ITC) are never
// carried over: the member accepts this season's terms themselves.

// prefillFromLastSeason stores the carried-over answers of persons in inst
// (which have none yet) and returns them by step and person.
func (s *Service) prefillFromLastSeason(ctx context.Context, tx bun.IDB, inst *engine.ProcessInstance, def *definition.Definition, persons []int64, now time.Time) (map[int64]map[int64]string, error) {
	if len(persons) == 0 {
		return nil, nil
	}
	var earlier []engine.ProcessInstance
	err := tx.NewSelect().Model(&earlier).Column("id", "definition_id", "selected_persons").
		Where("user_key = ? AND organisation_id = ? AND related_entity_id <> ? AND id <> ?", inst.UserKey, inst.OrganisationID, inst.RelatedEntityID, inst.ID).
		Where("status IN (?)", bun.List([]engine.ProcessState{engine.StateDone, engine.StateCompleted})).
		OrderExpr("COALESCE(end_time, updated_at) DESC, id DESC").Limit(10).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("find last season's registrations: %w", err)
	}
	// Each person's latest registration.
	source := map[int64]engine.ProcessInstance{}
	for _, e := range earlier {
		for _, id := range persons {
			if _, done := source[id]; !done && slices.Contains(e.SelectedPersons, id) {
				source[id] = e
			}
		}
	}
	if len(source) == 0 {
		return nil, nil
	}
	byName := make(map[string]*engine.ProcessStep, len(def.Steps))
	for i := range def.Steps {
		byName[def.Steps[i].Name] = &def.Steps[i]
	}
	carried := map[int64]map[int64]string{}
	var rows []engine.ProcessData
	for _, id := range persons {
		e, ok := source[id]
		if !ok {
			continue
		}
		old, err := definition.Of(s.Service).Cache().Get(ctx, tx, e.DefinitionID)
		if err != nil {
			return nil, err
		}
		var answers []engine.ProcessData
		if err := tx.NewSelect().Model(&answers).Where("instance_id = ? AND person_id = ? AND data_key = ?", e.ID, id, engine.DataAnswer).
			OrderExpr("id").Scan(ctx); err != nil {
			return nil, fmt.Errorf("load last season's answers: %w", err)
		}
		for _, a := range answers {
			step := carriedStep(old, byName, a)
			if step == nil {
				continue
			}
			if a.DataValue != "" && checkValue(step, def.Patterns[step.ID], a.DataValue) == (engine.Problem{}) {
				if carried[step.ID] == nil {
					carried[step.ID] = map[int64]string{}
				}
				carried[step.ID][id] = a.DataValue
			}
		}
	}
	// ONE (the main contact) holds for exactly one person of the new
	// selection: carried only while no more than one person has it.
	for stepID, byPerson := range carried {
		step := &def.Steps[def.StepNumber(stepID)-1]
		ones := 0
		for _, v := range byPerson {
			if v == "1" {
				ones++
			}
		}
		if step.QuestionType == engine.TypeOne && ones > 1 {
			delete(carried, stepID)
			continue
		}
		for personID, v := range byPerson {
			stepID, personID := stepID, personID
			rows = append(rows, engine.ProcessData{InstanceID: inst.ID, StepID: &stepID, PersonID: &personID, DataKey: engine.DataAnswer, DataValue: v, CreatedAt: now})
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
		return nil, fmt.Errorf("store last season's answers: %w", err)
	}
	return carried, nil
}

// carriedStep is the step of the new definition (by name) that an old
// answer a carries over to, or nil: the old step must exist, have the same
// name and question type, and not be a consent.
func carriedStep(old *definition.Definition, byName map[string]*engine.ProcessStep, a engine.ProcessData) *engine.ProcessStep {
	if a.StepID == nil {
		return nil
	}
	n := old.StepNumber(*a.StepID)
	if n == 0 {
		return nil
	}
	was := &old.Steps[n-1]
	step := byName[was.Name]
	if step == nil || step.QuestionType != was.QuestionType || step.QuestionType == engine.TypeAccept {
		return nil
	}
	return step
}
