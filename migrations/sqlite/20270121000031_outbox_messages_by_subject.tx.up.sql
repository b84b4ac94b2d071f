-- The order and the registration a message is about, read from its key ("kind:order:ID",
-- "kind:order:ID:…", "kind:instance:ID:…"), as generated columns with indexes of their own:
-- the open payments' reminders and last message, and a registration's messages, were found
-- by LIKE on the key, which no index serves, so every page read every message of the
-- federation (20,000 after one night; issue 42, docs/BENCHMARKS.md). Generated, the columns
-- hold for every writer and every row already there. SQLite has no regular expressions:
-- the digits are what follows the marker, up to the next ':' (for the order, or the key's end).
ALTER TABLE outbox_messages ADD COLUMN order_id INTEGER GENERATED ALWAYS AS (
    CASE WHEN instr(dedup_key, ':order:') > 0 THEN CAST(
        CASE WHEN instr(substr(dedup_key, instr(dedup_key, ':order:') + 7), ':') > 0
            THEN substr(substr(dedup_key, instr(dedup_key, ':order:') + 7), 1, instr(substr(dedup_key, instr(dedup_key, ':order:') + 7), ':') - 1)
            ELSE substr(dedup_key, instr(dedup_key, ':order:') + 7) END AS INTEGER) END) VIRTUAL;
ALTER TABLE outbox_messages ADD COLUMN instance_id INTEGER GENERATED ALWAYS AS (
    CASE WHEN instr(dedup_key, ':instance:') > 0 AND instr(substr(dedup_key, instr(dedup_key, ':instance:') + 10), ':') > 0 THEN CAST(
        substr(substr(dedup_key, instr(dedup_key, ':instance:') + 10), 1, instr(substr(dedup_key, instr(dedup_key, ':instance:') + 10), ':') - 1) AS INTEGER) END) VIRTUAL;
CREATE INDEX outbox_messages_order ON outbox_messages (order_id, id) WHERE order_id IS NOT NULL;
CREATE INDEX outbox_messages_instance ON outbox_messages (instance_id, id) WHERE instance_id IS NOT NULL;
