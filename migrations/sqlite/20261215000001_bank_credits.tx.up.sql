-- Bank credits a statement import could not match to an open payment (no
-- usable reference, an unknown one, or a second payment for a paid order),
-- kept for a treasurer to resolve: assign to a registration (captured as
-- a bank transfer would be), or mark returned to the payer or ignored,
-- with a note. organisation_id is NULL for the environment's shared
-- account (PORTAL_BANK_IBAN). credit_id is the bank's id of the credit,
-- recorded once per organisation, so re-importing a statement skips it.
CREATE TABLE bank_credits (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id   BIGINT REFERENCES organisations (id),
    account           TEXT NOT NULL,
    credit_id         TEXT NOT NULL,
    statement_id      TEXT NOT NULL DEFAULT '',
    amount_minor      BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    booked_on         TIMESTAMP,
    debtor_name       TEXT NOT NULL DEFAULT '',
    debtor_iban       TEXT NOT NULL DEFAULT '',
    reference         TEXT NOT NULL DEFAULT '',
    remittance        TEXT NOT NULL DEFAULT '',
    reason            TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL DEFAULT 'unmatched' CHECK (state IN ('unmatched','assigned','returned','ignored')),
    payment_reference TEXT,
    note              TEXT NOT NULL DEFAULT '',
    resolved_by       TEXT NOT NULL DEFAULT '',
    resolved_staff_id BIGINT REFERENCES staff_members (id),
    resolved_at       TIMESTAMP,
    created_at        TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX bank_credits_once ON bank_credits (COALESCE(organisation_id, 0), credit_id);
CREATE INDEX bank_credits_org_state ON bank_credits (organisation_id, state, id);
