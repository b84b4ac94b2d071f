ALTER TABLE orders DROP COLUMN payment_method;
ALTER TABLE organisation_payment_settings DROP COLUMN debit_file_version;
ALTER TABLE organisation_payment_settings DROP COLUMN debit_prenotification_days;
ALTER TABLE organisation_payment_settings DROP COLUMN debit_creditor_id;
ALTER TABLE organisation_payment_settings DROP COLUMN methods;
