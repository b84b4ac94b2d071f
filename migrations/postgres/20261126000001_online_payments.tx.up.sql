-- Online payments at a real provider (Stripe Checkout).

-- The order's own payment reference: the stable pay link {base}/pay/{reference}
-- carries it, and it stays the same across the order's payment attempts, so a
-- link in an e-mail still works after a checkout expired.
ALTER TABLE orders ADD COLUMN pay_reference TEXT;
UPDATE orders SET pay_reference = 'PO-' || upper(substr(md5(random()::text || id::text), 1, 16)) WHERE pay_reference IS NULL;
CREATE UNIQUE INDEX orders_pay_reference ON orders (pay_reference);

-- What the provider knows an attempt by (a Checkout Session id) and until when
-- it can be paid; when an asynchronous method (SEPA debit) reported
-- "processing"; a confirmation that did not match the attempt (amount or
-- currency), for staff; and the refund of a second payment of one order.
ALTER TABLE payments ADD COLUMN provider_id TEXT;
ALTER TABLE payments ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE payments ADD COLUMN confirming_at TIMESTAMPTZ;
ALTER TABLE payments ADD COLUMN problem TEXT NOT NULL DEFAULT '';
ALTER TABLE payments ADD COLUMN paid_amount_minor BIGINT;
ALTER TABLE payments ADD COLUMN paid_currency TEXT;
ALTER TABLE payments ADD COLUMN refund_status TEXT NOT NULL DEFAULT '' CHECK (refund_status IN ('', 'DUE', 'DONE'));
ALTER TABLE payments ADD COLUMN refund_id TEXT;
-- Not unique: stripe-mock (the tests' Stripe) gives every session the same id.
CREATE INDEX payments_provider_id ON payments (provider, provider_id);
CREATE INDEX payments_pending_since ON payments (created_at) WHERE status = 'PENDING';
CREATE INDEX payments_refund_due ON payments (id) WHERE refund_status = 'DUE';

-- Every confirmation a provider sent or we retrieved, for the record. A
-- provider's event id is stored once: the row is written in the settlement's
-- transaction, so a redelivered event finds it and changes nothing.
CREATE TABLE payment_events (
    id           BIGSERIAL PRIMARY KEY,
    provider     TEXT NOT NULL,
    event_id     TEXT,
    event_type   TEXT NOT NULL,
    reference    TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    amount_minor BIGINT,
    currency     TEXT,
    note         TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX payment_events_once ON payment_events (provider, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX payment_events_reference ON payment_events (reference);
