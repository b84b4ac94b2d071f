DROP TABLE organisation_retired_payment_accounts;
DROP INDEX payments_provider_account_id;
ALTER TABLE payments DROP COLUMN account;
