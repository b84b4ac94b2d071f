DROP TABLE IF EXISTS session_locks;
