ALTER TABLE membership_periods DROP COLUMN name_texts;
ALTER TABLE membership_types DROP COLUMN name_texts;
ALTER TABLE price_rules DROP COLUMN label_texts;
