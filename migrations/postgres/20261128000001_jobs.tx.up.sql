-- The job runner (engine/jobs): durable work written in the transaction of
-- the change it announces, claimed by any instance's workers.
--   state: queued (never tried), running (leased to locked_by until
--   locked_until), failed (tried, waiting for run_at to retry),
--   succeeded, dead (out of attempts or a permanent failure: staff retry it).
-- dedup_key is unique so that the same work enqueued twice (a replay, a
-- second instance's schedule) is one row; NULL: no deduplication.
CREATE TABLE jobs (
    id           BIGSERIAL PRIMARY KEY,
    kind         TEXT NOT NULL,
    dedup_key    TEXT UNIQUE,
    payload      TEXT NOT NULL DEFAULT '{}',
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    run_at       TIMESTAMPTZ NOT NULL,
    locked_by    TEXT,
    locked_until TIMESTAMPTZ,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    finished_at  TIMESTAMPTZ,
    CONSTRAINT jobs_state CHECK (state IN ('queued', 'running', 'failed', 'succeeded', 'dead'))
);
-- What a claim scans: work that is due, and leases that may have expired.
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE state IN ('queued', 'failed');
CREATE INDEX jobs_leased ON jobs (locked_until) WHERE state = 'running';
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state = 'succeeded';
