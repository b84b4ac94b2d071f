-- The staff pages' registration list: an organisation's (and period's)
-- registrations newest first, its state filter, the membership type filter
-- and each registration's newest order, without scanning the season.
CREATE INDEX process_instances_staff_list ON process_instances (organisation_id, related_entity_id, id);
CREATE INDEX process_instances_staff_state ON process_instances (organisation_id, status, id);
CREATE INDEX memberships_instance_type ON memberships (process_instance_id, membership_type_id);
CREATE INDEX orders_instance_id ON orders (process_instance_id, id);
