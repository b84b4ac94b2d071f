DELETE FROM process_step_options WHERE kind <> 'CHOICE';
ALTER TABLE process_step_options DROP COLUMN target_step_id;
ALTER TABLE process_step_options DROP COLUMN match_values;
ALTER TABLE process_step_options DROP COLUMN source_step_id;
ALTER TABLE process_step_options DROP COLUMN cond_operator;
ALTER TABLE process_step_options DROP COLUMN cond_scope;
ALTER TABLE process_step_options DROP COLUMN cond_action;
ALTER TABLE process_step_options DROP COLUMN kind;
