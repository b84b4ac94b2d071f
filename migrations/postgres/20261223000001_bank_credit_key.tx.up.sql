-- A bank credit is identified by what banks keep unique (banking.Credit.Key:
-- account, date, amount, entry and transaction references), per
-- organisation and account: a bank's AcctSvcrRef alone repeats across
-- entries and across banks. Credits kept before carry their bank id as a
-- legacy key, found by id and amount (engine/bank_credits.go).
ALTER TABLE bank_credits ADD COLUMN credit_key TEXT NOT NULL DEFAULT '';
UPDATE bank_credits SET credit_key = 'legacy:' || credit_id;
DROP INDEX bank_credits_once;
CREATE UNIQUE INDEX bank_credits_once ON bank_credits (COALESCE(organisation_id, 0), account, credit_key);
