ALTER TABLE organisations DROP COLUMN time_zone;
