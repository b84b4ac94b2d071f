-- A mandate's account holder and a transfer's payer by person id (issue
-- 38): the person of the household the name given is, recorded at the
-- write (engine.HouseholdPersonNamed), so that a person's export and
-- erasure find the mandates they hold and the transfers they paid by id,
-- never by comparing names (a person renamed since, or two of one name).
ALTER TABLE debit_mandates ADD COLUMN holder_person_id BIGINT NULL REFERENCES persons (id);
ALTER TABLE bank_credits ADD COLUMN payer_person_id BIGINT NULL REFERENCES persons (id);
CREATE INDEX debit_mandates_holder ON debit_mandates (holder_person_id);
CREATE INDEX bank_credits_payer ON bank_credits (payer_person_id);
-- Best effort for the rows written before: the one person linked to the
-- household now whose name, as "First Last", "Last First" or "Last,
-- First" in any case, is the holder's or payer's. Rows with no such
-- person, or two, keep no id: their holder or payer is erased only with
-- the household's last person (docs/DATA-PROTECTION.md).
UPDATE debit_mandates SET holder_person_id = (
    SELECT MIN(p.id) FROM persons AS p JOIN user_persons AS up ON up.person_id = p.id
    WHERE up.user_key = debit_mandates.user_key AND up.organisation_id = debit_mandates.organisation_id AND p.erased_at IS NULL
      AND LOWER(TRIM(debit_mandates.holder)) IN (LOWER(p.first_name || ' ' || p.last_name), LOWER(p.last_name || ' ' || p.first_name), LOWER(p.last_name || ', ' || p.first_name)))
WHERE (SELECT COUNT(*) FROM persons AS p JOIN user_persons AS up ON up.person_id = p.id
    WHERE up.user_key = debit_mandates.user_key AND up.organisation_id = debit_mandates.organisation_id AND p.erased_at IS NULL
      AND LOWER(TRIM(debit_mandates.holder)) IN (LOWER(p.first_name || ' ' || p.last_name), LOWER(p.last_name || ' ' || p.first_name), LOWER(p.last_name || ', ' || p.first_name))) = 1;
UPDATE bank_credits SET payer_person_id = (
    SELECT MIN(p.id) FROM payments AS pay JOIN orders AS o ON o.id = pay.order_id
    JOIN user_persons AS up ON up.user_key = o.user_key AND up.organisation_id = o.organisation_id JOIN persons AS p ON p.id = up.person_id
    WHERE pay.reference = bank_credits.payment_reference AND p.erased_at IS NULL
      AND LOWER(TRIM(bank_credits.debtor_name)) IN (LOWER(p.first_name || ' ' || p.last_name), LOWER(p.last_name || ' ' || p.first_name), LOWER(p.last_name || ', ' || p.first_name)))
WHERE payment_reference IS NOT NULL AND (
    SELECT COUNT(*) FROM payments AS pay JOIN orders AS o ON o.id = pay.order_id
    JOIN user_persons AS up ON up.user_key = o.user_key AND up.organisation_id = o.organisation_id JOIN persons AS p ON p.id = up.person_id
    WHERE pay.reference = bank_credits.payment_reference AND p.erased_at IS NULL
      AND LOWER(TRIM(bank_credits.debtor_name)) IN (LOWER(p.first_name || ' ' || p.last_name), LOWER(p.last_name || ' ' || p.first_name), LOWER(p.last_name || ', ' || p.first_name))) = 1;
