-- Every change and removal of a session is announced on the channel the
-- gateway instances' session caches listen on, with the session's id hash
-- (never the token). NOTIFY is sent when the writing transaction commits, so
-- the announcement cannot be lost between the write and a separate publish.
CREATE FUNCTION portal_announce_session_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('portal_session_invalidations', OLD.id_hash);
    RETURN NULL;
END
$$;

CREATE TRIGGER sessions_announce_write
    AFTER UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION portal_announce_session_write();
