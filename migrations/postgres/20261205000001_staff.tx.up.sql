-- Club staff who sign in to the staff pages (/staff): one record per
-- organisation and e-mail address. subject is the IdP's subject, bound at
-- the first sign-in with a verified e-mail address; later sign-ins match it.
CREATE TABLE staff_members (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    email           TEXT NOT NULL,
    name            TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('viewer','registrar','treasurer','admin')),
    subject         TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    last_sign_in_at TIMESTAMPTZ,
    disabled_at     TIMESTAMPTZ
);
CREATE UNIQUE INDEX staff_members_org_email ON staff_members (organisation_id, email);
CREATE UNIQUE INDEX staff_members_org_subject ON staff_members (organisation_id, subject) WHERE subject IS NOT NULL;

-- The append-only audit log of staff actions: who did what to which
-- target, with the values before and after (JSON). Nothing updates or
-- deletes its rows; the trigger below refuses both.
CREATE TABLE audit_log (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    actor           TEXT NOT NULL,
    staff_id        BIGINT REFERENCES staff_members (id),
    action          TEXT NOT NULL,
    target_type     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    instance_id     BIGINT,
    before_json     TEXT NOT NULL DEFAULT '',
    after_json      TEXT NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_log_org_time ON audit_log (organisation_id, id DESC);
CREATE INDEX audit_log_instance ON audit_log (instance_id, id DESC) WHERE instance_id IS NOT NULL;

CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
