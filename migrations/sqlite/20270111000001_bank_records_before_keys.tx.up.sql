-- Bank credits recorded before transaction keys (issue 37). Their key of
-- that time (a SHA-256 that named the entry's NtryRef and AcctSvcrRef
-- and the position) cannot be computed from another file of the same
-- transaction: a credit captured from the day's camt.054 before the
-- upgrade would be captured again from the night's camt.053 after it.
-- Each such record is kept here by what stays the same in every file
-- that reports the transaction: the account (scope, "bank:ORG:ACCOUNT:"
-- as CreditEventID writes it), the transaction's own AcctSvcrRef, the
-- amount, the currency and the booking date (engine/bankstatement
-- recordedBeforeKeys reads them). Captures from a statement are read
-- from their payment event (the note the import wrote: "booked DATE;
-- statement ID, credit REF ..."), kept and assigned credits from
-- bank_credits. Written once by this migration; later records are
-- found by their transaction key. Re-runnable: nothing is added twice.
CREATE TABLE IF NOT EXISTS bank_records_before_keys (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    scope           TEXT NOT NULL,
    record          TEXT NOT NULL UNIQUE,
    transaction_ref TEXT NOT NULL,
    amount_minor    BIGINT NOT NULL,
    currency        TEXT NOT NULL,
    booked_on       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bank_records_before_keys_ref ON bank_records_before_keys (scope, transaction_ref);

INSERT OR IGNORE INTO bank_records_before_keys (scope, record, transaction_ref, amount_minor, currency, booked_on)
SELECT scope, record, substr(rest, 1, instr(rest, ' ') - 1), amount_minor, currency, booked_on
FROM (
    SELECT substr(event_id, 1, length(event_id) - 64) AS scope, event_id AS record,
           replace(substr(note, instr(note, ', credit ') + 9), ';', ' ') || ' ' AS rest,
           amount_minor, upper(currency) AS currency, substr(note, 8, 10) AS booked_on
    FROM payment_events
    WHERE provider = 'bank_transfer' AND event_id LIKE 'bank:%' AND length(event_id) > 64
      AND note LIKE 'booked ____-__-__; statement %, credit %'
      AND amount_minor IS NOT NULL AND currency IS NOT NULL
) AS captured
WHERE instr(rest, ' ') > 1
;

INSERT OR IGNORE INTO bank_records_before_keys (scope, record, transaction_ref, amount_minor, currency, booked_on)
SELECT 'bank:' || COALESCE(organisation_id, 0) || ':' || upper(replace(account, ' ', '')) || ':', 'bank_credit:' || id,
       credit_id, amount_minor, upper(currency), substr(booked_on, 1, 10)
FROM bank_credits
WHERE booked_on IS NOT NULL AND credit_key NOT LIKE 'legacy:%' AND credit_key NOT LIKE 'id:%'
;
