-- A period's memberships by status: the season overview's and the year-end report's member
-- counts read them, which was a scan of every club's memberships; and the part payments of
-- bank transfers (few): the overview's and the report's money received read them, which was
-- a scan of every club's payment events (issue 42, docs/BENCHMARKS.md).
CREATE INDEX memberships_period_status ON memberships (period_id, status);
CREATE INDEX payment_events_partial_captures ON payment_events (reference)
    WHERE event_type = 'bank_transfer.capture' AND outcome = 'partial';
