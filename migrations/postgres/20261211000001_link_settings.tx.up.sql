-- An organisation's links: hash_links_off refuses the spec's never-expiring
-- hash links (?u=&h=) once its external system sends the portal's own
-- invitation links; invitation_expiry_days is how long a new invitation
-- stays valid (0: the portal's default, 30 days).
ALTER TABLE organisations ADD COLUMN hash_links_off BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE organisations ADD COLUMN invitation_expiry_days INTEGER NOT NULL DEFAULT 0;
