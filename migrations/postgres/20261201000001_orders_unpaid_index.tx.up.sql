-- A registration's load looks up its unpaid order (payment reconciliation
-- on every form and overview load): by user key and period, among the
-- unpaid ones only.
CREATE INDEX orders_unpaid_by_user_period ON orders (user_key, period_id) WHERE status = 'Unpaid';
