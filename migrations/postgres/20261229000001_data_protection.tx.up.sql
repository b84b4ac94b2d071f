-- Data protection (issue 30): consent records, the staff access log and
-- the retention settings per organisation. docs/DATA-PROTECTION.md.

-- The exact text of a consent as shown, stored once per version: its
-- hash is of the language and the text, so a changed text is a new row
-- and the records given under the old one keep theirs.
CREATE TABLE consent_texts (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    hash            TEXT NOT NULL, -- hex SHA-256 of language, NUL, text
    language        TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX consent_texts_org_hash ON consent_texts (organisation_id, hash);

-- One consent given: by (or for) which person, in which registration and
-- step (or for a mandate: no registration), of which kind, under which
-- text version, in which language, when.
CREATE TABLE consent_records (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    person_id       BIGINT NOT NULL REFERENCES persons (id),
    instance_id     BIGINT REFERENCES process_instances (id),
    step_id         BIGINT,
    source          TEXT NOT NULL, -- definition key and step name, or "mandate"
    kind            TEXT NOT NULL,
    text_id         BIGINT NOT NULL REFERENCES consent_texts (id),
    language        TEXT NOT NULL,
    given_at        TIMESTAMPTZ NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX consent_records_person ON consent_records (person_id);
CREATE INDEX consent_records_instance ON consent_records (instance_id);
-- A registration committed again (after a reset) records a consent once per text version.
CREATE UNIQUE INDEX consent_records_once ON consent_records (instance_id, step_id, person_id, text_id) WHERE instance_id IS NOT NULL;

-- A definition step may be marked as a consent (its kind); accept steps
-- (ITC) are consents without a mark too.
ALTER TABLE process_steps ADD COLUMN consent_kind TEXT;

-- Who of the staff opened whose data: a registration, a person, an export.
CREATE TABLE staff_access_log (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    staff_id        BIGINT,
    actor           TEXT NOT NULL, -- the staff member's e-mail, or "command line", or an API key
    kind            TEXT NOT NULL CHECK (kind IN ('registration', 'person', 'export')),
    record_id       TEXT NOT NULL,
    user_key        TEXT,    -- the household looked at, when known
    person_id       BIGINT, -- the person looked at, when one
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX staff_access_log_org ON staff_access_log (organisation_id, id);
CREATE INDEX staff_access_log_household ON staff_access_log (organisation_id, user_key);
CREATE INDEX staff_access_log_person ON staff_access_log (person_id);
CREATE INDEX staff_access_log_created ON staff_access_log (created_at);

-- An organisation's retention settings; NULL: the portal's default.
CREATE TABLE organisation_retention_settings (
    organisation_id BIGINT PRIMARY KEY REFERENCES organisations (id),
    person_seasons  INTEGER, -- seasons without a membership before a person is anonymised
    answer_months   INTEGER, -- months after archiving before a registration's answers go
    message_days    INTEGER, -- days after sending before a message's body goes
    access_log_days INTEGER  -- days an access log entry is kept
);
