-- A due direct debit that a collection run could not put into its file
-- (an account outside the EEA without its bank's BIC, ...) is left out
-- of the run rather than failing it for the whole club (issue 37): why,
-- in words, and the run that left it out (NULL when no debit could go
-- into a file, so no run was written). Cleared when a run takes the
-- order or its mandate is given, kept or changed; the payments needing
-- attention list such an order while it is due.
ALTER TABLE orders ADD COLUMN debit_problem TEXT NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN debit_problem_run_id BIGINT NULL REFERENCES debit_runs (id);
