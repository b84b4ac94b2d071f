DROP TRIGGER IF EXISTS sessions_announce_write ON sessions;
DROP FUNCTION IF EXISTS portal_announce_session_write();
