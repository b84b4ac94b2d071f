DROP INDEX bank_credits_once;
ALTER TABLE bank_credits DROP COLUMN credit_key;
CREATE UNIQUE INDEX bank_credits_once ON bank_credits (COALESCE(organisation_id, 0), credit_id);
