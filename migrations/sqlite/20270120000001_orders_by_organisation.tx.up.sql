-- The orders of one organisation by status (and period): the staff overview's money, the open
-- payments and the year-end report start from them; without it each of those read the
-- whole federation's unpaid orders (issue 42, docs/BENCHMARKS.md).
CREATE INDEX orders_organisation_status ON orders (organisation_id, status, period_id);
