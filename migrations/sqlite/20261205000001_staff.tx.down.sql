DROP TRIGGER IF EXISTS audit_log_no_update;
DROP TRIGGER IF EXISTS audit_log_no_delete;
DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS staff_members;
