DROP TABLE organisation_retention_settings;
DROP TABLE staff_access_log;
ALTER TABLE process_steps DROP COLUMN consent_kind;
DROP TABLE consent_records;
DROP TABLE consent_texts;
