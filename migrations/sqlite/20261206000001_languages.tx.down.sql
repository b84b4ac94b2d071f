ALTER TABLE process_steps DROP COLUMN texts;
ALTER TABLE process_instances DROP COLUMN language;
ALTER TABLE organisations DROP COLUMN enabled_languages;
