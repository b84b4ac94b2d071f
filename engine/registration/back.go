package registration

import (
	"context"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/internal/store"
)

// Back moves a running registration to the previous step and returns it
// with its saved answers; answering it again continues forward with the
// later answers pre-filled. step, when given, must be the current step.
func (s *Service) Back(ctx context.Context, userKey, processID string, step *int) (_ *Form, err error) {
	return s.returnTo(ctx, userKey, processID, step, -1)
}

// ReturnTo moves a running registration back to an earlier step (0 is person
// selection), for the "Change" links of a check-your-answers page. The
// target must not be after the current step.
func (s *Service) ReturnTo(ctx context.Context, userKey, processID string, target int) (_ *Form, err error) {
	if target < 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "there is no step %d", target)
	}
	return s.returnTo(ctx, userKey, processID, nil, target)
}

// returnTo moves to target, or to the step before the current one when target is -1.
func (s *Service) returnTo(ctx context.Context, userKey, processID string, from *int, target int) (*Form, error) {
	var form *Form
	err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		inst, def, err := s.loadOpen(ctx, tx, userKey, processID)
		if err != nil {
			return err
		}
		current := 0
		if inst.CurrentStepID != nil {
			current = def.StepNumber(*inst.CurrentStepID)
		}
		if from != nil && *from != current {
			return engine.Errorf(engine.CodeConflict, "this registration changed in another window: it is at step %d", current)
		}
		if target == -1 && current == 0 {
			return engine.Errorf(engine.CodeConflict, "there is no step before person selection")
		}
		if target > current {
			return engine.Errorf(engine.CodeConflict, "step %d is not answered yet: the registration is at step %d", target, current)
		}
		if current > 0 {
			// Back and Change follow the path of the answers saved now: an
			// earlier answer may have left steps out or brought them in.
			r, err := s.routeOf(ctx, tx, inst, def)
			if err != nil {
				return err
			}
			switch {
			case target == -1:
				target = r.Previous(current)
			case target > 0 && !r.Includes(target):
				return engine.Errorf(engine.CodeConflict, "step %d is not one of this registration's questions with the answers given", target)
			}
		}
		if target == 0 {
			inst.CurrentStepID = nil
		} else {
			inst.CurrentStepID = &def.Steps[target-1].ID
		}
		inst.Status = engine.StateRunning
		if err := store.BumpVersion(ctx, tx, inst, s.Clock(), "current_step_id", "status"); err != nil {
			return err
		}
		form, err = s.formFor(ctx, tx, inst, nil)
		return err
	})
	return form, err
}

// routeOf computes an instance's current path from its selection and saved answers.
func (s *Service) routeOf(ctx context.Context, db bun.IDB, inst *engine.ProcessInstance, def *definition.Definition) (*definition.Route, error) {
	selected, err := store.PersonsByID(ctx, db, inst.SelectedPersons)
	if err != nil {
		return nil, err
	}
	var answers map[int64]map[int64]string
	if def.HasConditions() {
		data, err := store.InstanceData(ctx, db, inst.ID)
		if err != nil {
			return nil, err
		}
		answers = answersOf(data)
	}
	return def.RouteFor(selected, inst.Period.StartDate, answers), nil
}
