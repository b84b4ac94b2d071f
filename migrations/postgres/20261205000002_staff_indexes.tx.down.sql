DROP INDEX IF EXISTS process_instances_staff_list;
DROP INDEX IF EXISTS process_instances_staff_state;
DROP INDEX IF EXISTS memberships_instance_type;
DROP INDEX IF EXISTS orders_instance_id;
