-- SEPA Direct Debit mandates a household (user key) gave a club (issue 29):
-- the account, the mandate text exactly as signed with its version and
-- language, and when. The reference is unique per creditor identifier.
-- An order paid by direct debit names the mandate it is collected under.
CREATE TABLE debit_mandates (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    user_key        TEXT NOT NULL,
    creditor_id     TEXT NOT NULL,
    reference       TEXT NOT NULL,
    holder          TEXT NOT NULL,
    iban            TEXT NOT NULL,
    bic             TEXT NOT NULL DEFAULT '',
    language        TEXT NOT NULL,
    text            TEXT NOT NULL,
    text_version    TEXT NOT NULL,
    signed_at       TIMESTAMPTZ NOT NULL,
    revoked_at      TIMESTAMPTZ NULL
);
CREATE UNIQUE INDEX debit_mandates_reference ON debit_mandates (creditor_id, reference);
CREATE INDEX debit_mandates_household ON debit_mandates (organisation_id, user_key);
ALTER TABLE orders ADD COLUMN debit_mandate_id BIGINT NULL REFERENCES debit_mandates (id);
