-- Who of the household wrote a data request (issue 38): what a member
-- typed (a new address, the right spelling of a name) is the writer's
-- data, and goes at the writer's erasure, as it does at the erasure of
-- the person the request is about. The member says who is writing on the
-- request form; a household of one person is its own writer.
ALTER TABLE data_requests ADD COLUMN writer_person_id BIGINT NULL REFERENCES persons (id);
CREATE INDEX data_requests_writer ON data_requests (writer_person_id);
-- Best effort for the requests made before: where the household has one
-- person linked now, that person wrote them. The others keep no writer;
-- their text goes with the person they are about, or with the household's
-- last person.
UPDATE data_requests SET writer_person_id = (SELECT MIN(up.person_id) FROM user_persons AS up
    WHERE up.user_key = data_requests.user_key AND up.organisation_id = data_requests.organisation_id)
WHERE (SELECT COUNT(*) FROM user_persons AS up
    WHERE up.user_key = data_requests.user_key AND up.organisation_id = data_requests.organisation_id) = 1;
