DROP TABLE bank_records_before_keys;
