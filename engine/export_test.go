package engine

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
)

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
