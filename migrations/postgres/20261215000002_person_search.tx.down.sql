-- The extension stays: other objects may use it.
DROP INDEX IF EXISTS persons_name_search;
DROP INDEX IF EXISTS persons_email_search;
