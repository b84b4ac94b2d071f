-- The 90-day archive of finished registrations (engine/lifecycle.go): one
-- row per archived instance, written with the removal of its process_data
-- in one transaction, so an instance is archived exactly once. data holds
-- the answers as JSON (mode "archive") or is NULL (mode "remove": only the
-- summary stays, beside the order and the memberships, which are kept).
CREATE TABLE process_archives (
    instance_id BIGINT PRIMARY KEY REFERENCES process_instances (id),
    mode        TEXT NOT NULL CHECK (mode IN ('archive', 'remove')),
    archived_at TIMESTAMPTZ NOT NULL,
    answers     INTEGER NOT NULL,
    summary     TEXT NOT NULL,
    data        TEXT
);
