-- Languages: the ones an organisation offers its members (comma-separated
-- codes of the shipped languages, default all three), and the language a
-- member registered in, which their e-mails and cards use ('' before this).
ALTER TABLE organisations ADD COLUMN enabled_languages TEXT NOT NULL DEFAULT 'en,de,fr';
ALTER TABLE process_instances ADD COLUMN language TEXT NOT NULL DEFAULT '';
