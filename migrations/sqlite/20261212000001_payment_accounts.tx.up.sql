-- The provider account that made a payment (engine.PaymentAccount of its
-- credentials: a fingerprint of the Stripe secret key, never the key;
-- '' for providers without accounts and for payments made before this
-- was recorded), so that its retrieval, refund and expiry go to that
-- account after the organisation changed its keys.
ALTER TABLE payments ADD COLUMN account TEXT NOT NULL DEFAULT '';

-- A provider's checkout id names one payment per account. Bank transfers
-- are left out: every attempt of an order carries the order's RF reference.
CREATE UNIQUE INDEX payments_provider_account_id ON payments (provider, account, provider_id)
    WHERE provider_id IS NOT NULL AND provider <> 'bank_transfer';

-- An organisation's earlier Stripe credentials, sealed as the current ones
-- are (the same associated data), kept when it changes its keys: payments
-- made with them are still retrieved, refunded and expired there, and
-- events signed with the earlier webhook secret still verify.
CREATE TABLE organisation_retired_payment_accounts (
    id                           INTEGER PRIMARY KEY AUTOINCREMENT,
    organisation_id              BIGINT NOT NULL REFERENCES organisations (id),
    provider                     TEXT NOT NULL,
    account                      TEXT NOT NULL,
    stripe_secret_key_sealed     TEXT NOT NULL DEFAULT '',
    stripe_webhook_secret_sealed TEXT NOT NULL DEFAULT '',
    retired_at                   TIMESTAMP NOT NULL
);
CREATE INDEX organisation_retired_payment_accounts_org ON organisation_retired_payment_accounts (organisation_id);
