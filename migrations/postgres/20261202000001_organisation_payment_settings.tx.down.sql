ALTER TABLE payments DROP COLUMN refund_note;
ALTER TABLE payments DROP COLUMN refunded_at;
ALTER TABLE payments DROP COLUMN refund_manual;
DROP TABLE organisation_payment_settings;
