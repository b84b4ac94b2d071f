package engine

import (
	"context"

	"github.com/uptrace/bun"
)

// Resume returns the current step with its saved answers and sets the state
// to RUNNING (the spec's operation description; its example said RESUME).
// A committed registration resumes at its payment link.
func (s *Service) Resume(ctx context.Context, userKey, processID string) (_ *Form, err error) {
	defer ClassifyUnavailable(&err)
	var form *Form
	err = InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		inst, err := loadUnfinished(ctx, tx, userKey, processID, "")
		if err != nil {
			return err
		}
		if inst.Status == StateSuspended || inst.Status == StateResume {
			inst.Status = StateRunning
			if err := BumpVersion(ctx, tx, inst, s.Clock(), "status"); err != nil {
				return err
			}
		}
		form, err = s.formFor(ctx, tx, inst, nil)
		return err
	})
	return form, err
}
