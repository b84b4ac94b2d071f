DROP INDEX process_instances_one_open;
CREATE UNIQUE INDEX process_instances_one_open
    ON process_instances (user_key, related_entity_type, related_entity_id, definition_key)
    WHERE status NOT IN ('COMPLETED','CANCELLED','FAILED');
