package message

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// ByKey loads the outbox message with dedup key key: what the job
// delivering it (outbound/messages) sends; not found once it is gone.
func ByKey(ctx context.Context, db bun.IDB, key string) (*engine.OutboxMessage, error) {
	return store.OutboxMessageByKey(ctx, db, key)
}

// MarkSent records that the outbox message id went out at at, so that a
// retry of its job sends it no second time.
func MarkSent(ctx context.Context, db bun.IDB, id int64, at time.Time) error {
	return store.MarkMessageSent(ctx, db, id, at)
}
