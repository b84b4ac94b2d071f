ALTER TABLE organisations DROP COLUMN invitation_expiry_days;
ALTER TABLE organisations DROP COLUMN hash_links_off;
