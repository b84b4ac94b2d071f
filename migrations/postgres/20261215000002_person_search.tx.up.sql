-- The staff registration search finds persons by a substring of their name
-- (lower(first_name || ' ' || last_name) LIKE '%...%') or by their e-mail
-- (lower(email) = ...). A B-tree serves the e-mail; a substring needs a
-- trigram index (pg_trgm), which only a role allowed to create the
-- extension gets (pg_trgm is trusted from PostgreSQL 13: the database's
-- owner may). Where it cannot be created the migration goes on without it
-- and the name search scans the organisation's persons.
CREATE INDEX persons_email_search ON persons (lower(email));

DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm could not be installed (%): the staff name search runs without its index', SQLERRM;
END
$$;

DO $$
DECLARE
    nsp text;
BEGIN
    SELECT extnamespace::regnamespace::text INTO nsp FROM pg_extension WHERE extname = 'pg_trgm';
    IF nsp IS NOT NULL THEN
        EXECUTE format('CREATE INDEX persons_name_search ON persons USING gin (lower(first_name || %L || last_name) %s.gin_trgm_ops)', ' ', nsp);
    END IF;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'the trigram index could not be created (%): the staff name search runs without it', SQLERRM;
END
$$;
