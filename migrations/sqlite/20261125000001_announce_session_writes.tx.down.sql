-- Nothing to do on SQLite: it cannot notify other processes, so sessions on
-- it are never cached (see the PostgreSQL migration of the same name).
SELECT 1;
