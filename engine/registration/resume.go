package registration

import (
	"context"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Resume returns the current step with its saved answers and sets the state
// to RUNNING (the spec's operation description; its example said RESUME).
// A committed registration resumes at its payment link.
func (s *Service) Resume(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	var form *Form
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		inst, err := loadUnfinished(ctx, tx, userKey, processID, "")
		if err != nil {
			return err
		}
		if inst.Status == engine.StateSuspended || inst.Status == engine.StateResume {
			inst.Status = engine.StateRunning
			if err := store.BumpVersion(ctx, tx, inst, s.Clock(), "status"); err != nil {
				return err
			}
		}
		form, err = s.formFor(ctx, tx, inst, nil)
		return err
	})
	return form, err
}
