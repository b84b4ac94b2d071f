DROP INDEX data_requests_writer;
ALTER TABLE data_requests DROP COLUMN writer_person_id;
