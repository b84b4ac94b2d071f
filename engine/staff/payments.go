package staff

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
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
	// AttentionDebitReturned: the attempt was a direct debit the bank
	// returned (engine/directdebit/debit_returns.go) and its order is still unpaid: the
	// member was told, and may need a word from the treasurer.
	AttentionDebitReturned = "debit_returned"
	// AttentionDebitLeftOut: the order is due by direct debit, but a
	// collection run could not put its debit into the file (Order.DebitProblem
	// says why in words, engine/directdebit/debit_runs.go), until a run
	// takes it or its mandate is given, kept or changed again.
	AttentionDebitLeftOut = "debit_left_out"
	// AttentionPendingTooLong: the attempt is still open after the
	// threshold; the member may need a reminder, or the transfer a look.
	AttentionPendingTooLong = "pending_too_long"
)

// PendingTooLong is how long a payment attempt may stay open before it
// needs attention.
const PendingTooLong = 14 * 24 * time.Hour

// AttentionPayment is one attempt needing attention, with its order.
type AttentionPayment struct {
	Payment engine.Payment
	Order   engine.Order
	// Reason is one of the Attention* constants.
	Reason string
	// RefundByHand: the money is due back and staff transfer it (a bank
	// transfer; MarkRefundPaidBack once done). A second payment through a
	// provider is refunded by the portal's jobs.
	RefundByHand bool
	// ReturnCode is the bank's reason of a returned debit
	// (AttentionDebitReturned; banking.ReturnReasonText says it in words).
	ReturnCode string
	// Household are the names of the persons of the order's registration.
	Household []string
}

// AttentionQuery says whose attempts PaymentsNeedingAttention lists.
type AttentionQuery struct {
	// OrganisationID: 0 for the context's organisation, or every
	// organisation without a scope (the command line).
	OrganisationID int64
	// PendingSince: attempts open since before it are listed too; zero for
	// PendingTooLong before now.
	PendingSince time.Time
	// Limit: at most this many (0: 500).
	Limit int
}

// PaymentsNeedingAttention lists the payment attempts that need a person:
// a confirmation whose amount or currency did not match an order still
// unpaid (or a direct debit return that did not match its debit), money
// due back (a second payment), a returned direct debit whose order is
// unpaid, the open attempt of a due direct-debit order that a collection
// run left out of its file, or an attempt pending since before
// q.PendingSince. Problems first, then refunds due, then returned and
// left-out debits, then oldest first. The staff payments page, the admin
// API and `portal payments attention` list them; the season overview
// counts them.
func (s *Service) PaymentsNeedingAttention(ctx context.Context, q AttentionQuery) (_ []AttentionPayment, err error) {
	if q.Limit <= 0 {
		q.Limit = 500
	}
	var pays []engine.Payment
	sel := s.attentionQuery(ctx, s.DB().NewSelect().Model(&pays), q, 0).
		OrderExpr("CASE WHEN problem <> '' THEN 0 WHEN refund_status = ? THEN 1 WHEN status = ? THEN 2 WHEN order_id IN (?) THEN 2 ELSE 3 END, created_at, id",
			engine.RefundDue, engine.PaymentFailed, leftOutOrders(s.DB())).
		Limit(int64(q.Limit))
	if err := sel.Scan(ctx); err != nil {
		return nil, fmt.Errorf("payments needing attention: %w", err)
	}
	if len(pays) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(pays))
	for i, p := range pays {
		ids[i] = p.OrderID
	}
	var orders []engine.Order
	if err := s.DB().NewSelect().Model(&orders).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("orders of payments needing attention: %w", err)
	}
	byID := make(map[int64]engine.Order, len(orders))
	for _, o := range orders {
		byID[o.ID] = o
	}
	returns, err := returnCodesOf(ctx, s.DB(), pays)
	if err != nil {
		return nil, err
	}
	out := make([]AttentionPayment, 0, len(pays))
	for _, p := range pays {
		a := AttentionPayment{Payment: p, Order: byID[p.OrderID], Reason: AttentionPendingTooLong}
		switch {
		case p.Problem != "" && (a.Order.Status == engine.OrderUnpaid || p.Provider == payment.DirectDebitProvider):
			a.Reason = AttentionProblem
		case p.RefundStatus == engine.RefundDue:
			a.Reason, a.RefundByHand = AttentionSecondPayment, p.RefundManual
		case p.Status == engine.PaymentFailed:
			a.Reason, a.ReturnCode = AttentionDebitReturned, returns[p.ID]
		case p.Status == engine.PaymentPending && a.Order.DebitProblem != "" && a.Order.DebitDueOn != nil:
			a.Reason = AttentionDebitLeftOut
		}
		out = append(out, a)
	}
	if err := s.fillAttentionHouseholds(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// fillAttentionHouseholds names the household of each attempt's
// registration, as the registrations list does (fillHouseholds), one
// organisation at a time: the command line lists every organisation's.
func (s *Service) fillAttentionHouseholds(ctx context.Context, list []AttentionPayment) error {
	byOrg := map[int64][]int{}
	var ids []int64
	for i, a := range list {
		byOrg[a.Order.OrganisationID] = append(byOrg[a.Order.OrganisationID], i)
		ids = append(ids, a.Order.ProcessInstanceID)
	}
	var selected []struct {
		ID           int64  `bun:"id"`
		SelectedJSON string `bun:"selected_persons"`
	}
	if err := s.DB().NewSelect().TableExpr("process_instances AS pi").ColumnExpr("pi.id, pi.selected_persons").
		Where("pi.id IN (?)", bun.List(ids)).Scan(ctx, &selected); err != nil {
		return fmt.Errorf("registrations of payments needing attention: %w", err)
	}
	chosen := make(map[int64]string, len(selected))
	for _, r := range selected {
		chosen[r.ID] = r.SelectedJSON
	}
	for org, idx := range byOrg {
		rows := make([]RegistrationRow, len(idx))
		for j, i := range idx {
			rows[j].ID, rows[j].SelectedJSON = list[i].Order.ProcessInstanceID, chosen[list[i].Order.ProcessInstanceID]
		}
		if err := s.fillHouseholds(ctx, org, rows); err != nil {
			return err
		}
		for j, i := range idx {
			list[i].Household = rows[j].Household
		}
	}
	return nil
}

// CountPaymentsNeedingAttention counts what PaymentsNeedingAttention lists
// (of one period's orders when periodID is not 0).
func (s *Service) CountPaymentsNeedingAttention(ctx context.Context, q AttentionQuery, periodID int64) (_ int, err error) {
	n, err := s.attentionQuery(ctx, s.DB().NewSelect().Model((*engine.Payment)(nil)), q, periodID).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("count payments needing attention: %w", err)
	}
	return int(n), nil
}

// attentionQuery narrows a select of payments to those needing attention
// (of one period's orders when periodID is not 0). The organisation and
// the period are one lookup of its orders (orders_organisation_status);
// each condition on the payment's own order is a lookup of that order
// (EXISTS on ?TableAlias.order_id), not a set of every organisation's
// orders of that status, which read the whole federation's orders and
// payments for each overview (issue 42).
func (s *Service) attentionQuery(ctx context.Context, sel *bun.SelectQuery, q AttentionQuery, periodID int64) *bun.SelectQuery {
	if q.PendingSince.IsZero() {
		q.PendingSince = s.Clock().Add(-PendingTooLong)
	}
	org := q.OrganisationID
	if scope, ok := engine.OrganisationOf(ctx); ok && org == 0 {
		org = scope
	}
	if org != 0 || periodID != 0 {
		ofOrders, args := engine.OrderOf(s.DB(), "?TableAlias.order_id", org, periodID)
		sel = sel.Where(ofOrders, args...)
	}
	orderIs := "EXISTS (SELECT 1 FROM orders AS ao WHERE ao.id = ?TableAlias.order_id AND "
	return sel.WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
		return w.Where("problem <> '' AND "+orderIs+"ao.status = ?)", engine.OrderUnpaid).
			// A return that did not match its debit: the order stays paid.
			WhereOr("problem <> '' AND provider = ? AND status = ?", payment.DirectDebitProvider, engine.PaymentSucceeded).
			WhereOr("refund_status = ?", engine.RefundDue).
			// A returned debit, until its order is paid (or cancelled).
			WhereOr("status = ? AND provider = ? AND "+orderIs+"ao.status = ?) AND id IN (SELECT payment_id FROM debits WHERE status = ?)",
				engine.PaymentFailed, payment.DirectDebitProvider, engine.OrderUnpaid, payment.DebitReturned).
			// The open attempt of a due order a collection run left out
			// (leftOutOrders).
			WhereOr("status = ? AND "+orderIs+"ao.debit_problem <> '' AND ao.debit_due_on IS NOT NULL AND ao.status = ?)",
				engine.PaymentPending, engine.OrderUnpaid).
			// Pending too long; not a direct debit whose mandate is given:
			// it waits for its collection day, which may be weeks away.
			WhereOr("status = ? AND created_at < ? AND NOT (provider = ? AND "+orderIs+"ao.debit_due_on IS NOT NULL))",
				engine.PaymentPending, q.PendingSince.UTC(), payment.DirectDebitProvider)
	})
}

func leftOutOrders(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().Model((*engine.Order)(nil)).Column("id").
		Where("debit_problem <> '' AND debit_due_on IS NOT NULL AND status = ?", engine.OrderUnpaid)
}

// returnCodesOf are the reason codes of the returned debits of pays, by
// payment id.
func returnCodesOf(ctx context.Context, db bun.IDB, pays []engine.Payment) (map[int64]string, error) {
	var ids []int64
	for _, p := range pays {
		if p.Provider == payment.DirectDebitProvider && p.Status == engine.PaymentFailed {
			ids = append(ids, p.ID)
		}
	}
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var debits []payment.Debit
	if err := db.NewSelect().Model(&debits).Column("payment_id", "return_code").
		Where("payment_id IN (?) AND status = ?", bun.List(ids), payment.DebitReturned).Scan(ctx); err != nil {
		return nil, fmt.Errorf("returned debits of payments needing attention: %w", err)
	}
	for _, d := range debits {
		out[d.PaymentID] = d.ReturnCode
	}
	return out, nil
}

// ReturnedDebitText says a returned debit's reason in words (English, for
// the admin API and the command line; the staff page says it in its own
// language), with the bank's code.
func ReturnedDebitText(code string) string {
	out := "direct debit returned by the bank: " + banking.ReturnReasonText(code, "en")
	if code != "" {
		out += " (" + code + ")"
	}
	return out
}
