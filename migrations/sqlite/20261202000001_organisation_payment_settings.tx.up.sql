-- An organisation's own payment settings; an organisation without a row
-- (or with provider '') pays through the environment's PORTAL_PAYMENT_ and
-- PORTAL_STRIPE_/PORTAL_BANK_ settings. The Stripe keys are sealed with
-- PORTAL_SESSION_KEY (AES-256-GCM, bound to the organisation and the
-- field); the bank details are not secret and stay readable.
CREATE TABLE organisation_payment_settings (
    organisation_id              BIGINT PRIMARY KEY REFERENCES organisations (id),
    provider                     TEXT NOT NULL DEFAULT '',
    stripe_secret_key_sealed     TEXT NOT NULL DEFAULT '',
    stripe_webhook_secret_sealed TEXT NOT NULL DEFAULT '',
    bank_creditor_name           TEXT NOT NULL DEFAULT '',
    bank_iban                    TEXT NOT NULL DEFAULT '',
    bank_bic                     TEXT NOT NULL DEFAULT '',
    -- street;number;postcode;town;country as PORTAL_BANK_CREDITOR_ADDRESS, '' for none.
    bank_creditor_address        TEXT NOT NULL DEFAULT '',
    updated_at                   TIMESTAMP NOT NULL
);

-- A refund the provider cannot make (money that came by bank transfer goes
-- back by a transfer staff make): refund_manual marks it, so that the
-- reconciliation stops asking the provider; refunded_at and refund_note are
-- when staff marked it paid back, and their note.
ALTER TABLE payments ADD COLUMN refund_manual BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE payments ADD COLUMN refunded_at TIMESTAMP;
ALTER TABLE payments ADD COLUMN refund_note TEXT NOT NULL DEFAULT '';
