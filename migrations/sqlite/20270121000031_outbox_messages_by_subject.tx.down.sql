DROP INDEX outbox_messages_instance;
DROP INDEX outbox_messages_order;
ALTER TABLE outbox_messages DROP COLUMN instance_id;
ALTER TABLE outbox_messages DROP COLUMN order_id;
