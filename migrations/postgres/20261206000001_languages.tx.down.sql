ALTER TABLE process_steps DROP COLUMN IF EXISTS texts;
ALTER TABLE process_instances DROP COLUMN IF EXISTS language;
ALTER TABLE organisations DROP COLUMN IF EXISTS enabled_languages;
