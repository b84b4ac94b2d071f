DROP TABLE IF EXISTS data_requests;
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$ LANGUAGE plpgsql;
ALTER TABLE audit_log DROP COLUMN erased_at;
ALTER TABLE persons DROP COLUMN erased_at;
