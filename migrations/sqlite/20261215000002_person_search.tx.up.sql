-- The staff search folds case with portal_fold (a Go function registered
-- with the driver, engine/search_text.go): an index on the e-mail as the
-- search folds it cannot name that function (the schema must open without
-- it), and a substring search scans anyway. Nothing to add on SQLite; the
-- file keeps the migration numbers of both dialects the same.
SELECT 1;
