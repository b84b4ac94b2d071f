-- Invitations: links the portal issues for a user key and a period. The
-- link carries the row's id and expiry under an HMAC (keyed per
-- organisation); the row is what can be revoked and what records who was
-- invited and opened the link. Whether it was mailed is read from the
-- outbox (message "invitation:<id>"), whether the household registered or
-- paid from its registration and order: nothing is copied here.
CREATE TABLE invitations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    period_id       BIGINT NOT NULL REFERENCES membership_periods (id),
    user_key        TEXT NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    expires_at      TIMESTAMP NOT NULL,
    opened_at       TIMESTAMP,
    revoked_at      TIMESTAMP
);
CREATE INDEX invitations_period_idx ON invitations (period_id, user_key);
CREATE INDEX invitations_org_idx ON invitations (organisation_id);
