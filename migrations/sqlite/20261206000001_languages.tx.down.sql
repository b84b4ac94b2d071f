ALTER TABLE process_instances DROP COLUMN language;
ALTER TABLE organisations DROP COLUMN enabled_languages;
