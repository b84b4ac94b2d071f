package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/jobs"
)

// Store functions for the outbox (outbox_messages): messages to send,
// written in the transaction that caused them.
//
// outbox_messages is the record of what a member is told (kind, recipient,
// payload, when it went out); the jobs table (engine/jobs) is how it gets
// there. queueMessage writes both in the caller's transaction, so a message
// exists exactly when its cause committed, and a mail server outage delays
// it (the job retries) instead of losing it.

// OutboxJobKey is the dedup key of the job that delivers the outbox message
// with dedup key messageKey.
func OutboxJobKey(messageKey string) string { return "outbox:" + messageKey }

// QueueMessage puts a message in the outbox once, with the job that
// delivers it: a message whose dedup key is already there is left as it is,
// and so is its job. The job's kind is the message's kind.
func QueueMessage(ctx context.Context, db bun.IDB, msg *engine.OutboxMessage) error {
	if _, err := db.NewInsert().Model(msg).On("CONFLICT (dedup_key) DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("queue %s: %w", msg.Kind, err)
	}
	if _, err := jobs.Enqueue(ctx, db, msg.CreatedAt, jobs.Spec{Kind: string(msg.Kind), DedupKey: OutboxJobKey(msg.DedupKey),
		Payload: engine.OutboxJob{Message: msg.DedupKey}}); err != nil {
		return fmt.Errorf("queue %s: %w", msg.Kind, err)
	}
	return nil
}

// OutboxMessageByKey loads the outbox message with the given dedup key.
func OutboxMessageByKey(ctx context.Context, db bun.IDB, key string) (*engine.OutboxMessage, error) {
	msg := new(engine.OutboxMessage)
	if err := db.NewSelect().Model(msg).Where("dedup_key = ?", key).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "outbox message")
	}
	return msg, nil
}

// MarkMessageSent records when an outbox message went out.
func MarkMessageSent(ctx context.Context, db bun.IDB, id int64, at time.Time) error {
	if _, err := db.NewUpdate().Model((*engine.OutboxMessage)(nil)).Set("sent_at = ?", at.UTC()).Where("id = ?", id).Exec(ctx); err != nil {
		return fmt.Errorf("mark message %d sent: %w", id, err)
	}
	return nil
}

// QueueMessageNow queues a message in a transaction of its own: for the
// scheduled jobs, whose messages announce no other write.
func QueueMessageNow(ctx context.Context, db *bun.DB, msg *engine.OutboxMessage) error {
	return engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error { return QueueMessage(ctx, tx, msg) })
}

// messageBatch is how many messages QueueMessagesNow queues per transaction.
const messageBatch = 500

// QueueMessagesNow queues messages as QueueMessageNow queues each, a batch
// of them per transaction: a nightly job that queues thousands (a
// federation's unpaid reminders) would otherwise spend a commit on each.
// Each is queued once by its dedup key, so a batch that fails is queued
// again by the job's next run.
func QueueMessagesNow(ctx context.Context, db *bun.DB, msgs []*engine.OutboxMessage) error {
	for from := 0; from < len(msgs); from += messageBatch {
		err := engine.InTx(ctx, db, func(ctx context.Context, tx bun.Tx) error {
			for _, msg := range msgs[from:min(from+messageBatch, len(msgs))] {
				if err := QueueMessage(ctx, tx, msg); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
