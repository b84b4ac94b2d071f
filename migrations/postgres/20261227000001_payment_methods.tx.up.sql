-- Payment methods per club (issue 29): the methods its members choose
-- from, comma-separated with the default first ('' keeps the one provider
-- of the provider column), and the direct-debit settings: the SEPA
-- Creditor Identifier, the pre-notification period in calendar days and
-- the pain.008 version of the collection files ('' for pain.008.001.08).
-- An order records the method its member chose ('' for the club's default).
ALTER TABLE organisation_payment_settings ADD COLUMN methods TEXT NOT NULL DEFAULT '';
ALTER TABLE organisation_payment_settings ADD COLUMN debit_creditor_id TEXT NOT NULL DEFAULT '';
ALTER TABLE organisation_payment_settings ADD COLUMN debit_prenotification_days INTEGER NOT NULL DEFAULT 14;
ALTER TABLE organisation_payment_settings ADD COLUMN debit_file_version TEXT NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN payment_method TEXT NOT NULL DEFAULT '';
