-- The order and the registration a message is about, read from its key ("kind:order:ID",
-- "kind:order:ID:…", "kind:instance:ID:…"), as generated columns with indexes of their own:
-- the open payments' reminders and last message, and a registration's messages, were found
-- by LIKE on the key, which no index serves, so every page read every message of the
-- federation (20,000 after one night; issue 42, docs/BENCHMARKS.md). Generated, the columns
-- hold for every writer and every row already there.
ALTER TABLE outbox_messages
    ADD COLUMN order_id BIGINT GENERATED ALWAYS AS (substring(dedup_key from ':order:([0-9]+)(?::|$)')::bigint) STORED,
    ADD COLUMN instance_id BIGINT GENERATED ALWAYS AS (substring(dedup_key from ':instance:([0-9]+):')::bigint) STORED;
CREATE INDEX outbox_messages_order ON outbox_messages (order_id, id) WHERE order_id IS NOT NULL;
CREATE INDEX outbox_messages_instance ON outbox_messages (instance_id, id) WHERE instance_id IS NOT NULL;
