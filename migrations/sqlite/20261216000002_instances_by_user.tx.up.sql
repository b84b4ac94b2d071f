-- Person selection looks for the user key's earlier registrations in the
-- organisation (answers carried from last season, prefill): by user key and
-- organisation, among every state (the one-open index holds open ones only).
CREATE INDEX process_instances_by_user_org ON process_instances (user_key, organisation_id);
