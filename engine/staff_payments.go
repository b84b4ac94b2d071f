package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// What the staff payments page reads: the payment attempts that need a
// person, and the audit of confirmations staff make by hand.

// Why a payment attempt needs attention, most urgent first.
const (
	// AttentionProblem: the money that arrived did not match the attempt
	// (payments.problem); the registration is not completed.
	AttentionProblem = "problem"
	// AttentionSecondPayment: the attempt succeeded for an order already
	// paid or cancelled; the money is due back to the member.
	AttentionSecondPayment = "second_payment"
	// AttentionPendingTooLong: the attempt is still open after the
	// threshold; the member may need a reminder, or the transfer a look.
	AttentionPendingTooLong = "pending_too_long"
)

// AttentionPayment is one attempt needing attention, with its order.
type AttentionPayment struct {
	Payment Payment
	Order   Order
	// Reason is one of the Attention* constants.
	Reason string
}

// StaffPaymentsNeedingAttention lists an organisation's payment attempts that
// need a person: a problem recorded, a second payment to give back, or
// pending since before pendingSince. At most limit, problems first, then
// oldest first.
func (s *Service) StaffPaymentsNeedingAttention(ctx context.Context, organisationID int64, pendingSince time.Time, limit int) (_ []AttentionPayment, err error) {
	defer classifyUnavailable(&err)
	var pays []Payment
	if err := s.db.NewSelect().Model(&pays).
		Where("order_id IN (SELECT id FROM orders WHERE organisation_id = ?)", organisationID).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("problem <> ''").WhereOr("refund_status = ?", RefundDue).
				WhereOr("status = ? AND created_at < ?", PaymentPending, pendingSince.UTC())
		}).
		OrderExpr("CASE WHEN problem <> '' THEN 0 WHEN refund_status = ? THEN 1 ELSE 2 END, created_at, id", RefundDue).
		Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("payments needing attention: %w", err)
	}
	if len(pays) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(pays))
	for i, p := range pays {
		ids[i] = p.OrderID
	}
	var orders []Order
	if err := s.db.NewSelect().Model(&orders).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("orders of payments needing attention: %w", err)
	}
	byID := make(map[int64]Order, len(orders))
	for _, o := range orders {
		byID[o.ID] = o
	}
	out := make([]AttentionPayment, 0, len(pays))
	for _, p := range pays {
		a := AttentionPayment{Payment: p, Order: byID[p.OrderID], Reason: AttentionPendingTooLong}
		switch {
		case p.Problem != "":
			a.Reason = AttentionProblem
		case p.RefundStatus == RefundDue:
			a.Reason = AttentionSecondPayment
		}
		out = append(out, a)
	}
	return out, nil
}

// auditConfirmation writes a payment confirmed by staff (a bank transfer
// captured on the staff pages) to the audit log, in the transaction that
// records it.
func (s *Service) auditConfirmation(ctx context.Context, tx bun.IDB, actor Actor, p *Payment, order *Order, ev *PaymentEvent) error {
	instance := order.ProcessInstanceID
	after := map[string]any{"reference": p.Reference, "event": ev.EventType, "outcome": ev.Outcome, "note": ev.Note}
	if ev.AmountMinor != nil && ev.Currency != nil {
		after["amount"] = FormatMoney(*ev.AmountMinor, *ev.Currency)
	}
	return s.Audit(ctx, tx, actor, AuditEntry{OrganisationID: order.OrganisationID, Action: "payment.capture",
		TargetType: "registration", TargetID: fmt.Sprint(instance), InstanceID: &instance,
		Before: map[string]any{"payment": string(p.Status), "order": string(order.Status)}, After: after})
}
