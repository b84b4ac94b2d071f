DROP TABLE IF EXISTS books_findings;
