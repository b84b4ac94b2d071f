DROP TABLE IF EXISTS process_archives;
