-- A club's own texts per language: a price rule's label, a membership
-- type's and a period's name, as a JSON object of language codes to texts
-- ('' when the text is one for every language). The existing columns
-- (label, name) keep the default language's text, which clients that
-- know no languages read and write.
ALTER TABLE price_rules ADD COLUMN label_texts TEXT NOT NULL DEFAULT '';
ALTER TABLE membership_types ADD COLUMN name_texts TEXT NOT NULL DEFAULT '';
ALTER TABLE membership_periods ADD COLUMN name_texts TEXT NOT NULL DEFAULT '';
