-- The nightly books check (engine/books): each organisation's violations
-- of the money's invariants as the last run found them, replaced by every
-- run, for the staff overview and /readyz. A finding names orders,
-- payments and bank credits by id and amounts, never a person.
CREATE TABLE books_findings (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
    rule            TEXT NOT NULL,
    message         TEXT NOT NULL,
    records         TEXT NOT NULL,
    checked_at      TIMESTAMP NOT NULL
);
CREATE INDEX books_findings_organisation ON books_findings (organisation_id);
