-- Organisations as tenants: the settings a club sees on its pages and the
-- way a request finds its club (a hostname, or the slug in /o/{slug}/...).
ALTER TABLE organisations ADD COLUMN slug TEXT NOT NULL DEFAULT '';
ALTER TABLE organisations ADD COLUMN contact_email TEXT NOT NULL DEFAULT '';
ALTER TABLE organisations ADD COLUMN logo_url TEXT NOT NULL DEFAULT '';
ALTER TABLE organisations ADD COLUMN accent_colour TEXT NOT NULL DEFAULT '';
ALTER TABLE organisations ADD COLUMN default_language TEXT NOT NULL DEFAULT 'en';
-- The id the admin backend knows this organisation's registration system by,
-- sent with the hash login (spec: "the registration system id comes from the
-- tenant context"); '' sends none.
ALTER TABLE organisations ADD COLUMN registration_system_id TEXT NOT NULL DEFAULT '';
-- The organisation's own hash-link secret, sealed with PORTAL_SESSION_KEY
-- (AES-256-GCM); '' means the environment's PORTAL_HASH_SECRET.
ALTER TABLE organisations ADD COLUMN hash_secret_sealed TEXT NOT NULL DEFAULT '';
-- Existing organisations get a slug from their id; the admin API renames them.
UPDATE organisations SET slug = 'org-' || id WHERE slug = '';
CREATE UNIQUE INDEX organisations_slug ON organisations (slug);

-- Hostnames (lower case, without port) that resolve to one organisation each.
CREATE TABLE organisation_hosts (
    hostname        TEXT PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id)
);
CREATE INDEX organisation_hosts_org_idx ON organisation_hosts (organisation_id);

-- API keys of the admin API: only a SHA-256 of the key is kept; the prefix
-- (the key's first characters) lets an operator tell keys apart in a list.
CREATE TABLE api_keys (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    name            TEXT NOT NULL,
    prefix          TEXT NOT NULL,
    key_hash        TEXT NOT NULL UNIQUE,
    scope           TEXT NOT NULL CHECK (scope IN ('read','write')),
    created_at      TIMESTAMPTZ NOT NULL,
    last_used_at    TIMESTAMPTZ,
    revoked_at      TIMESTAMPTZ
);
CREATE INDEX api_keys_org_idx ON api_keys (organisation_id);

-- The external system's own id of a person: the key of the admin API's
-- idempotent person import (one per organisation).
ALTER TABLE persons ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX persons_external_id ON persons (organisation_id, external_id) WHERE external_id IS NOT NULL;
