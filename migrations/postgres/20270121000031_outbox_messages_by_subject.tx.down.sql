DROP INDEX outbox_messages_instance;
DROP INDEX outbox_messages_order;
ALTER TABLE outbox_messages DROP COLUMN instance_id, DROP COLUMN order_id;
