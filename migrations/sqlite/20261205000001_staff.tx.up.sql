-- Club staff who sign in to the staff pages (/staff): one record per
-- organisation and e-mail address. subject is the IdP's subject, bound at
-- the first sign-in with a verified e-mail address; later sign-ins match it.
CREATE TABLE staff_members (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    email           TEXT NOT NULL,
    name            TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('viewer','registrar','treasurer','admin')),
    subject         TEXT,
    created_at      TIMESTAMP NOT NULL,
    last_sign_in_at TIMESTAMP,
    disabled_at     TIMESTAMP
);
CREATE UNIQUE INDEX staff_members_org_email ON staff_members (organisation_id, email);
CREATE UNIQUE INDEX staff_members_org_subject ON staff_members (organisation_id, subject) WHERE subject IS NOT NULL;

-- The append-only audit log of staff actions: who did what to which
-- target, with the values before and after (JSON). Nothing updates or
-- deletes its rows; the triggers below refuse both.
CREATE TABLE audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    actor           TEXT NOT NULL,
    staff_id        BIGINT REFERENCES staff_members (id),
    action          TEXT NOT NULL,
    target_type     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    instance_id     BIGINT,
    before_json     TEXT NOT NULL DEFAULT '',
    after_json      TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL
);
CREATE INDEX audit_log_org_time ON audit_log (organisation_id, id DESC);
CREATE INDEX audit_log_instance ON audit_log (instance_id, id DESC) WHERE instance_id IS NOT NULL;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
