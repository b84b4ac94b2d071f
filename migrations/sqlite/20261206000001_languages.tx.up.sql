-- Languages: the ones an organisation offers its members (comma-separated
-- codes of the shipped languages, default all three), and the language a
-- member registered in, which their e-mails and cards use ('' before this).
ALTER TABLE organisations ADD COLUMN enabled_languages TEXT NOT NULL DEFAULT 'en,de,fr';
ALTER TABLE process_instances ADD COLUMN language TEXT NOT NULL DEFAULT '';
-- A definition step's texts per language (question, options, format
-- message, price label) as JSON; '' when its texts are one for all languages.
ALTER TABLE process_steps ADD COLUMN texts TEXT NOT NULL DEFAULT '';
