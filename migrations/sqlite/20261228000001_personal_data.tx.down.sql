DROP TABLE IF EXISTS data_requests;
DROP TRIGGER IF EXISTS audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
ALTER TABLE audit_log DROP COLUMN erased_at;
ALTER TABLE persons DROP COLUMN erased_at;
