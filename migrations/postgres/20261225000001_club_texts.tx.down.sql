ALTER TABLE membership_periods DROP COLUMN IF EXISTS name_texts;
ALTER TABLE membership_types DROP COLUMN IF EXISTS name_texts;
ALTER TABLE price_rules DROP COLUMN IF EXISTS label_texts;
