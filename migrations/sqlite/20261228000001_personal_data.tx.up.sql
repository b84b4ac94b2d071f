-- Data protection (issue 30): members' requests for a correction or an
-- erasure, erased persons, and erased audit details.
--
-- A person erased keeps their row for the books (orders, payments and
-- memberships refer to it) with the names replaced; erased_at says so.
ALTER TABLE persons ADD COLUMN erased_at TIMESTAMP;

-- The audit log stays append-only, with one exception: an erasure may
-- replace an entry's details (before_json, after_json) when it marks the
-- entry erased (erased_at); who did what, to what and when never change.
ALTER TABLE audit_log ADD COLUMN erased_at TIMESTAMP;
DROP TRIGGER audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT (NEW.erased_at IS NOT NULL AND NEW.id = OLD.id AND NEW.organisation_id = OLD.organisation_id
    AND NEW.actor = OLD.actor AND NEW.staff_id IS OLD.staff_id AND NEW.action = OLD.action
    AND NEW.target_type = OLD.target_type AND NEW.target_id = OLD.target_id
    AND NEW.instance_id IS OLD.instance_id AND NEW.created_at = OLD.created_at)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- A member's request about their data: a correction (their text says
-- what) or an erasure, from the "Your data" page; staff mark it done.
CREATE TABLE data_requests (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    user_key        TEXT NOT NULL,
    person_id       BIGINT REFERENCES persons (id),
    kind            TEXT NOT NULL CHECK (kind IN ('correction','erasure')),
    message         TEXT NOT NULL DEFAULT '',
    language        TEXT NOT NULL DEFAULT '',
    reply_to        TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','done')),
    created_at      TIMESTAMP NOT NULL,
    done_at         TIMESTAMP,
    done_by         TEXT NOT NULL DEFAULT '',
    note            TEXT NOT NULL DEFAULT ''
);
CREATE INDEX data_requests_org ON data_requests (organisation_id, status, id);
CREATE INDEX data_requests_user ON data_requests (user_key, organisation_id);
