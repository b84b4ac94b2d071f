-- Leases that keep the token refresh of one session to one gateway instance
-- at a time. name is the SHA-256 of the session token, as in sessions.
CREATE TABLE session_locks (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
