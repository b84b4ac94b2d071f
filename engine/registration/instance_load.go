package registration

import (
	"context"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
)

// Loading a member's registration for a request: by its id as the URL
// carries it, refused once it is committed or finished where the action
// needs an open one.

// loadOpen loads an instance of userKey that is neither committed nor
// finished, with its definition version.
func (s *Service) loadOpen(ctx context.Context, db bun.IDB, userKey, processID string) (*engine.ProcessInstance, *definition.Definition, error) {
	inst, err := store.LoadInstance(ctx, db, userKey, processID)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOpen(inst); err != nil {
		return nil, nil, err
	}
	def, err := definition.Of(s.Service).Cache().Get(ctx, db, inst.DefinitionID)
	if err != nil {
		return nil, nil, err
	}
	return inst, def, nil
}

// answersOf indexes answers by step and person.
func answersOf(rows []engine.ProcessData) map[int64]map[int64]string {
	out := map[int64]map[int64]string{}
	for _, r := range rows {
		if r.DataKey != engine.DataAnswer || r.StepID == nil || r.PersonID == nil {
			continue
		}
		if out[*r.StepID] == nil {
			out[*r.StepID] = map[int64]string{}
		}
		out[*r.StepID][*r.PersonID] = r.DataValue
	}
	return out
}

// loadUnfinished loads an instance of userKey that is not finished
// (completed, cancelled, failed); a finished one is a conflict: "this
// registration is already completed" and then refusal, such as " and
// cannot be reset".
func loadUnfinished(ctx context.Context, db bun.IDB, userKey, processID, refusal string) (*engine.ProcessInstance, error) {
	inst, err := store.LoadInstance(ctx, db, userKey, processID)
	if err != nil {
		return nil, err
	}
	if engine.Finished(inst.Status) {
		return nil, engine.Errorf(engine.CodeConflict, "this registration is already %s%s", stateWord(inst.Status), refusal)
	}
	return inst, nil
}
