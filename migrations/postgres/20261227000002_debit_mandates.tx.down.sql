ALTER TABLE orders DROP COLUMN debit_mandate_id;
DROP TABLE IF EXISTS debit_mandates;
