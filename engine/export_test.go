package engine

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

// DemoDefinitionYAML is the demo definition's source, for tests that import
// a changed version of it.
func DemoDefinitionYAML() []byte { return demoDefinition }

// EmitThenRollBack writes an event in a transaction that then fails, as a
// change that rolls back after announcing itself would.
func EmitThenRollBack(ctx context.Context, db *bun.DB, orgID int64, eventType string, now time.Time) error {
	return InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		if err := EmitEvent(ctx, tx, orgID, eventType, map[string]int{"n": 1}, now); err != nil {
			return err
		}
		return errors.New("the change failed after its event")
	})
}

// EmitAt writes and commits an event as of now.
func EmitAt(ctx context.Context, db *bun.DB, orgID int64, eventType string, now time.Time) error {
	return InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
		return EmitEvent(ctx, tx, orgID, eventType, map[string]int{"n": 1}, now)
	})
}

// StaleWrites runs the question step's, the person selection's and the
// reset's writes on the registration processID of userKey as if it had
// been read at version, each on a fresh read: a version that moved since
// must make each of them write nothing and return a conflict.
func (s *Service) StaleWrites(ctx context.Context, userKey, processID string, version int64) ([]error, error) {
	writes := []func(inst *ProcessInstance, now time.Time) error{
		func(inst *ProcessInstance, now time.Time) error {
			return s.storeStepAnswers(ctx, s.db, inst, now, *inst.CurrentStepID, map[int64]string{inst.SelectedPersons[0]: "stale"}, true)
		},
		func(inst *ProcessInstance, now time.Time) error { return s.storeFirstSelection(ctx, inst, now) },
		func(inst *ProcessInstance, now time.Time) error { return s.writeReset(ctx, inst, now) },
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
