package engine

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Store functions for the outbox (outbox_messages): messages to send,
// written in the transaction that caused them.

// queueMessage puts a message in the outbox once: a message whose dedup
// key is already there is left as it is.
func queueMessage(ctx context.Context, db bun.IDB, msg *OutboxMessage) error {
	if _, err := db.NewInsert().Model(msg).On("CONFLICT (dedup_key) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("queue %s: %w", msg.Kind, err)
	}
	return nil
}
