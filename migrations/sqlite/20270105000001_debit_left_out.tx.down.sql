ALTER TABLE orders DROP COLUMN debit_problem_run_id;
ALTER TABLE orders DROP COLUMN debit_problem;
