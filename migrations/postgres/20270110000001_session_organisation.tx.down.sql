DROP INDEX sessions_household_idx;
ALTER TABLE sessions DROP COLUMN organisation_id;
