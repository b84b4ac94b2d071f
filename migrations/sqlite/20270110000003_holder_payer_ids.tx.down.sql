DROP INDEX bank_credits_payer;
DROP INDEX debit_mandates_holder;
ALTER TABLE bank_credits DROP COLUMN payer_person_id;
ALTER TABLE debit_mandates DROP COLUMN holder_person_id;
