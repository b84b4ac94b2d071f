package registration

import (
	"context"
	"time"

	"portal/engine"
)

// StaleWrites runs the question step's, the person selection's and the
// reset's writes on the registration processID of userKey as if it had
// been read at version, each on a fresh read: a version that moved since
// must make each of them write nothing and return a conflict.
func (s *Service) StaleWrites(ctx context.Context, userKey, processID string, version int64) ([]error, error) {
	writes := []func(inst *engine.ProcessInstance, now time.Time) error{
		func(inst *engine.ProcessInstance, now time.Time) error {
			return s.storeStepAnswers(ctx, s.DB(), inst, now, *inst.CurrentStepID, map[int64]string{inst.SelectedPersons[0]: "stale"}, true)
		},
		func(inst *engine.ProcessInstance, now time.Time) error { return s.storeFirstSelection(ctx, inst, now) },
		func(inst *engine.ProcessInstance, now time.Time) error { return s.writeReset(ctx, inst, now) },
	}
	var errs []error
	for _, write := range writes {
		state, err := s.loadQuestionState(ctx, userKey, processID)
		if err != nil {
			return nil, err
		}
		state.inst.Version = version
		errs = append(errs, write(state.inst, s.Clock()))
	}
	return errs, nil
}
