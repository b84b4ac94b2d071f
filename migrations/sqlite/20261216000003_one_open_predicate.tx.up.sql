-- The same rule, written without IN: SQLite evaluates a partial index's
-- condition on every update of the table, and a NOT IN list of three
-- builds a temporary index each time (two per question step), whose pages
-- the pure-Go allocator maps and unmaps: a tenth of the portal's CPU under
-- load. Queries that use the index name the same three conditions.
DROP INDEX process_instances_one_open;
CREATE UNIQUE INDEX process_instances_one_open
    ON process_instances (user_key, related_entity_type, related_entity_id, definition_key)
    WHERE status <> 'COMPLETED' AND status <> 'CANCELLED' AND status <> 'FAILED';
