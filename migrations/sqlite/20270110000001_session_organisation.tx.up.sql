-- A session belongs to the organisation it was started in (issue 38): the
-- household of user key "demo" in one club is not the household "demo" of
-- another, so a household's export lists, and its erasure ends, only its
-- own club's sessions. The store writes the column from the session's
-- organisation attribute; NULL for a session bound to none (an OIDC or
-- staff session, a gateway without organisations).
ALTER TABLE sessions ADD COLUMN organisation_id BIGINT NULL;
CREATE INDEX sessions_household_idx ON sessions (organisation_id, user_key);
-- Best effort for the sessions open at the upgrade (their organisation is
-- inside their values, which may be sealed): a user key linked in exactly
-- one organisation is that organisation's household. The others stay NULL,
-- in no household's export or erasure, and end within the session's
-- maximum lifetime (12 hours by default).
UPDATE sessions SET organisation_id = (SELECT MIN(up.organisation_id) FROM user_persons AS up WHERE up.user_key = sessions.user_key)
WHERE user_key <> ''
  AND (SELECT COUNT(DISTINCT up.organisation_id) FROM user_persons AS up WHERE up.user_key = sessions.user_key) = 1;
