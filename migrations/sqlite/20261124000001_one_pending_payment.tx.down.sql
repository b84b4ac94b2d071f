DROP INDEX IF EXISTS payments_one_pending;
