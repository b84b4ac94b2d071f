-- Outbound webhooks. An endpoint is where an organisation wants its events
-- POSTed, signed with a secret the portal generated (sealed with the session
-- key). An event is written in the transaction of the change it announces,
-- with one delivery per subscribed endpoint; each delivery has a job
-- (job_key) that sends it and retries it, and records its last attempt here.
CREATE TABLE webhook_endpoints (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    url             TEXT NOT NULL,
    secret_sealed   TEXT NOT NULL,
    events          TEXT NOT NULL,
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    disabled_reason TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (organisation_id);

CREATE TABLE webhook_events (
    id              BIGSERIAL PRIMARY KEY,
    public_id       TEXT NOT NULL UNIQUE,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    type            TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_events_org_idx ON webhook_events (organisation_id, created_at);

CREATE TABLE webhook_deliveries (
    id               BIGSERIAL PRIMARY KEY,
    event_id         BIGINT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint_id      BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    job_key          TEXT NOT NULL UNIQUE,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    response_code    INTEGER,
    response_snippet TEXT NOT NULL DEFAULT '',
    last_error       TEXT NOT NULL DEFAULT '',
    last_attempt_at  TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at);
