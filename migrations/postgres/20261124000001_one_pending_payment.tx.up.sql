-- At most one open payment attempt per order: two tabs asking for a payment
-- link at once share one attempt instead of opening two that could both be paid.
CREATE UNIQUE INDEX payments_one_pending ON payments (order_id) WHERE status = 'PENDING';
