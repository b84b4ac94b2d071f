-- Conditions of a step (issue 17) are process_step_options rows of kind
-- CONDITION next to the CHOICE rows of DRP/RDO/SEL steps. value holds the
-- condition's name within its step ("if1", ...) so that UNIQUE (step_id,
-- value) keeps holding; label is its readable form for staff pages.
ALTER TABLE process_step_options ADD COLUMN kind TEXT NOT NULL DEFAULT 'CHOICE';
ALTER TABLE process_step_options ADD COLUMN cond_action TEXT;
ALTER TABLE process_step_options ADD COLUMN cond_scope TEXT;
ALTER TABLE process_step_options ADD COLUMN cond_operator TEXT;
ALTER TABLE process_step_options ADD COLUMN source_step_id BIGINT REFERENCES process_steps (id);
ALTER TABLE process_step_options ADD COLUMN match_values TEXT;
ALTER TABLE process_step_options ADD COLUMN target_step_id BIGINT REFERENCES process_steps (id);
