-- Collecting SEPA direct debits (issue 29).
--
-- The club's collection day (day of the month, 0: the first TARGET
-- business day once the pre-notification period has passed) and the
-- return fee its bank charges, added to the order of a returned debit.
ALTER TABLE organisation_payment_settings ADD COLUMN debit_collection_day INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organisation_payment_settings ADD COLUMN debit_return_fee_minor BIGINT NOT NULL DEFAULT 0;
-- The date a direct-debit order is due to be collected, set when its
-- mandate is given (the member's confirmation is the pre-notification).
ALTER TABLE orders ADD COLUMN debit_due_on DATE NULL;
-- A mandate's account change is stated once, in the next collection file
-- (the amendment details); its last collection starts the 36 months after
-- which an unused mandate expires; why it ended, when it did.
ALTER TABLE debit_mandates ADD COLUMN previous_iban TEXT NOT NULL DEFAULT '';
ALTER TABLE debit_mandates ADD COLUMN previous_bic TEXT NOT NULL DEFAULT '';
ALTER TABLE debit_mandates ADD COLUMN amended_at TIMESTAMPTZ NULL;
ALTER TABLE debit_mandates ADD COLUMN last_collected_at TIMESTAMPTZ NULL;
ALTER TABLE debit_mandates ADD COLUMN end_reason TEXT NOT NULL DEFAULT '';
-- A collection run: the due debits of one club gathered into one pain.008
-- file, kept byte for byte so that it downloads again unchanged.
-- prepared -> sent (settles its payments) or prepared -> cancelled.
CREATE TABLE debit_runs (
    id              BIGSERIAL PRIMARY KEY,
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    message_id      TEXT NOT NULL,
    file_version    TEXT NOT NULL,
    until_on        DATE NOT NULL,
    status          TEXT NOT NULL,
    debit_count     INTEGER NOT NULL,
    total_minor     BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    file            BYTEA NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    sent_at         TIMESTAMPTZ NULL,
    cancelled_at    TIMESTAMPTZ NULL
);
CREATE UNIQUE INDEX debit_runs_message ON debit_runs (organisation_id, message_id);
CREATE INDEX debit_runs_org ON debit_runs (organisation_id, created_at);
-- One debit of a run: an order's payment attempt collected under a
-- mandate. The end-to-end id names it in the file and in the bank's
-- return. in_run -> collected (run sent) -> returned, or in_run ->
-- cancelled (run cancelled). An order is in one live debit at most.
CREATE TABLE debits (
    id              BIGSERIAL PRIMARY KEY,
    run_id          BIGINT NOT NULL REFERENCES debit_runs (id),
    organisation_id BIGINT NOT NULL REFERENCES organisations (id),
    order_id        BIGINT NOT NULL REFERENCES orders (id),
    payment_id      BIGINT NOT NULL REFERENCES payments (id),
    mandate_id      BIGINT NOT NULL REFERENCES debit_mandates (id),
    end_to_end_id   TEXT NOT NULL,
    amount_minor    BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    due_on          DATE NOT NULL,
    sequence_type   TEXT NOT NULL,
    amended         BOOLEAN NOT NULL DEFAULT FALSE,
    status          TEXT NOT NULL,
    return_code     TEXT NOT NULL DEFAULT '',
    returned_at     TIMESTAMPTZ NULL
);
CREATE UNIQUE INDEX debits_end_to_end ON debits (organisation_id, end_to_end_id);
CREATE UNIQUE INDEX debits_one_live_per_order ON debits (order_id) WHERE status IN ('in_run', 'collected');
-- An order's debits, looked up when it is paid (the confirmation's key
-- counts its returned debits): the partial unique index covers only the
-- live ones.
CREATE INDEX debits_order ON debits (order_id);
CREATE INDEX debits_run ON debits (run_id);
CREATE INDEX debits_mandate ON debits (mandate_id);
