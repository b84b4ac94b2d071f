// Package books checks a club's money against invariants that hold
// whatever happened to it: imports of overlapping bank files, partial
// payments and overpayments, second payments, captures by hand, direct
// debits collected and returned. A violation is a defect in the portal (or
// a change made to the database by hand), never a member's doing: each is
// said in words with the records involved, for the treasurer and for
// whoever fixes the code. `portal books check` runs it; the property tests
// (engine/books_property_test.go) assert it stays clean after every step of
// random sequences of imports, refunds, collections and returns.
package books

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/bankstatement"
	"portal/engine/payment"
	"portal/engine/report"
	"portal/engine/staff"
)

// Rule names an invariant of the books.
type Rule string

// The invariants Check holds the books to.
const (
	// RuleCreditOnce: a bank transaction is counted at most once on its
	// account: never kept as an unmatched credit while it is also
	// captured for a payment.
	RuleCreditOnce Rule = "credit_once"
	// RuleParts: an order still unpaid has received less in parts than
	// its total (the part that completes it marks it paid).
	RuleParts Rule = "parts_below_total"
	// RulePaidHasPayment: a paid order has a payment that succeeded.
	RulePaidHasPayment Rule = "paid_has_payment"
	// RulePaidMemberships: a paid order's memberships are active, none
	// still waits for payment.
	RulePaidMemberships Rule = "paid_memberships_active"
	// RuleOpenPayments: what the open payments list says is received and
	// owed is what the captures add up to: owed is the total less the
	// parts.
	RuleOpenPayments Rule = "open_payments_owed"
	// RuleYearReport: the year-end report of each period says what the
	// orders and payments it reads add up to: paid orders and their
	// breakdowns by membership type and price rule, money received per
	// method and in all, income as received less refunded less owed
	// back, outstanding as the open payments list's sum.
	RuleYearReport Rule = "year_report_totals"
)

// Finding is one violation of a rule, in words, with the records involved.
type Finding struct {
	Rule           Rule
	OrganisationID int64
	// Message says what is wrong, naming the records and the amounts.
	Message string
	// Records names the rows involved, such as "order 12" or "bank
	// credit 7".
	Records []string
}

// String is the finding as the command prints it.
func (f Finding) String() string {
	return fmt.Sprintf("organisation %d: %s: %s [%s]", f.OrganisationID, f.Rule, f.Message, strings.Join(f.Records, ", "))
}

// Check holds one organisation's books to every rule and returns the
// violations, none when the books are sound. It only reads.
func Check(ctx context.Context, svc *engine.Service, orgID int64) (_ []Finding, err error) {
	db := svc.DB()
	var out []Finding
	for _, check := range []func(context.Context, bun.IDB, int64) ([]Finding, error){creditsOnce, paidOrders} {
		found, err := check(ctx, db, orgID)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	// The unpaid orders' parts, read once for both rules that hold them.
	unpaid, err := unpaidOrders(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	out = append(out, partsBelowTotal(unpaid)...)
	found, err := openPaymentsOwed(ctx, svc, orgID, unpaid)
	if err != nil {
		return nil, err
	}
	out = append(out, found...)
	if found, err = yearReportTotals(ctx, svc, orgID); err != nil {
		return nil, err
	}
	out = append(out, found...)
	for i := range out {
		out[i].OrganisationID = orgID
	}
	return out, nil
}

// creditsOnce finds bank credits kept as unmatched (or ignored) while a
// capture records the same transaction on the same account: the money
// would be counted twice, once paid and once still to place.
func creditsOnce(ctx context.Context, db bun.IDB, orgID int64) ([]Finding, error) {
	var kept []bankstatement.BankCredit
	if err := db.NewSelect().Model(&kept).Column("id", "account", "credit_id", "credit_key", "amount_minor", "currency", "state").
		Where("organisation_id = ? AND state IN (?)", orgID, bun.List([]bankstatement.CreditState{bankstatement.CreditUnmatched, bankstatement.CreditIgnored})).
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("books: load kept credits: %w", err)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	ids := make([]string, len(kept))
	for i, c := range kept {
		ids[i] = bankstatement.CreditEventID(orgID, c.Account, c.CreditKey)
	}
	var events []engine.PaymentEvent
	if err := db.NewSelect().Model(&events).Column("event_id", "reference").Where("event_id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("books: load captures: %w", err)
	}
	captured := map[string]string{}
	for _, e := range events {
		captured[*e.EventID] = e.Reference
	}
	var out []Finding
	for i, c := range kept {
		if ref, ok := captured[ids[i]]; ok {
			out = append(out, Finding{Rule: RuleCreditOnce, Records: []string{fmt.Sprintf("bank credit %d", c.ID), "payment " + ref},
				Message: fmt.Sprintf("the bank's credit %s of %s on %s is listed as %s and also captured for payment %s: counted twice",
					c.CreditID, engine.FormatMoney(c.AmountMinor, c.Currency), c.Account, c.State, ref)})
		}
	}
	return out, nil
}

// orderFigures is an unpaid order with what its partial captures add up
// to (in its currency).
type orderFigures struct {
	ID         int64  `bun:"id"`
	TotalMinor int64  `bun:"total_minor"`
	Currency   string `bun:"currency"`
	PartsMinor int64  `bun:"parts_minor"`
}

// unpaidOrders are the organisation's unpaid orders with their parts, in
// order of id; the parts are summed by a join of their own, apart from the
// open payments list's subquery that openPaymentsOwed holds to them.
func unpaidOrders(ctx context.Context, db bun.IDB, orgID int64) ([]orderFigures, error) {
	var orders []orderFigures
	if err := db.NewSelect().TableExpr("orders AS o").ColumnExpr("o.id, o.total_minor, o.currency").
		Where("o.organisation_id = ? AND o.status = ?", orgID, engine.OrderUnpaid).Order("o.id").Scan(ctx, &orders); err != nil {
		return nil, fmt.Errorf("books: load unpaid orders: %w", err)
	}
	var parts []struct {
		OrderID int64 `bun:"order_id"`
		Sum     int64 `bun:"sum"`
	}
	if err := db.NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		Join("JOIN orders AS o ON o.id = p.order_id").
		ColumnExpr("p.order_id, SUM(e.amount_minor) AS sum").
		Where("o.organisation_id = ? AND o.status = ?", orgID, engine.OrderUnpaid).
		Where("e.event_type = ? AND e.outcome = ? AND e.currency = o.currency", payment.BankCaptureEvent, payment.PartialCaptureOutcome).
		GroupExpr("p.order_id").Scan(ctx, &parts); err != nil {
		return nil, fmt.Errorf("books: load parts: %w", err)
	}
	sums := make(map[int64]int64, len(parts))
	for _, p := range parts {
		sums[p.OrderID] = p.Sum
	}
	for i := range orders {
		orders[i].PartsMinor = sums[orders[i].ID]
	}
	return orders, nil
}

// partsBelowTotal finds unpaid orders whose partial captures reach their
// total: the order should have been marked paid, or a part was counted
// twice.
func partsBelowTotal(unpaid []orderFigures) []Finding {
	var out []Finding
	for _, o := range unpaid {
		if o.TotalMinor > 0 && o.PartsMinor >= o.TotalMinor {
			out = append(out, Finding{Rule: RuleParts, Records: []string{fmt.Sprintf("order %d", o.ID)},
				Message: fmt.Sprintf("order %d is unpaid, yet its parts add up to %s of %s",
					o.ID, engine.FormatMoney(o.PartsMinor, o.Currency), engine.FormatMoney(o.TotalMinor, o.Currency))})
		}
	}
	return out
}

// paidOrders finds paid orders without a successful payment, and paid
// orders whose registration still has memberships waiting for payment.
func paidOrders(ctx context.Context, db bun.IDB, orgID int64) ([]Finding, error) {
	var rows []struct {
		ID        int64 `bun:"id"`
		Succeeded int   `bun:"succeeded"`
		Pending   int   `bun:"pending"`
	}
	if err := db.NewSelect().TableExpr("orders AS o").ColumnExpr("o.id").
		ColumnExpr("(SELECT COUNT(*) FROM payments AS p WHERE p.order_id = o.id AND p.status = ?) AS succeeded", engine.PaymentSucceeded).
		ColumnExpr("(SELECT COUNT(*) FROM memberships AS m WHERE m.process_instance_id = o.process_instance_id AND m.status = ?) AS pending", engine.MembershipPending).
		Where("o.organisation_id = ? AND o.status = ?", orgID, engine.OrderPaid).
		// A newer order of the registration replaced this one: its
		// memberships are the newer order's to settle.
		Where("o.id = (SELECT MAX(o2.id) FROM orders AS o2 WHERE o2.process_instance_id = o.process_instance_id)").
		Order("o.id").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("books: load paid orders: %w", err)
	}
	var out []Finding
	for _, r := range rows {
		if r.Succeeded == 0 {
			out = append(out, Finding{Rule: RulePaidHasPayment, Records: []string{fmt.Sprintf("order %d", r.ID)},
				Message: fmt.Sprintf("order %d is paid, but none of its payments succeeded", r.ID)})
		}
		if r.Pending > 0 {
			out = append(out, Finding{Rule: RulePaidMemberships, Records: []string{fmt.Sprintf("order %d", r.ID)},
				Message: fmt.Sprintf("order %d is paid, but %d of its memberships still wait for payment", r.ID, r.Pending)})
		}
	}
	return out, nil
}

// openPaymentsOwed reads the open payments as staff see them and holds
// each row to the captures: received is the parts captured for the order,
// owed the total less those.
func openPaymentsOwed(ctx context.Context, svc *engine.Service, orgID int64, unpaid []orderFigures) ([]Finding, error) {
	rows, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: orgID})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	received := make(map[int64]int64, len(unpaid))
	for _, o := range unpaid {
		received[o.ID] = o.PartsMinor
	}
	var out []Finding
	for _, r := range rows {
		want := received[r.OrderID]
		if r.ReceivedMinor != want || r.OwedMinor != r.TotalMinor-want {
			out = append(out, Finding{Rule: RuleOpenPayments, Records: []string{fmt.Sprintf("order %d", r.OrderID)},
				Message: fmt.Sprintf("open payments show order %d as %s received and %s owed; its captures add up to %s of %s",
					r.OrderID, engine.FormatMoney(r.ReceivedMinor, r.Currency), engine.FormatMoney(r.OwedMinor, r.Currency),
					engine.FormatMoney(want, r.Currency), engine.FormatMoney(r.TotalMinor, r.Currency))})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out, nil
}

// yearReportTotals holds each period's year-end report to sums of its
// own, read here from the orders and payments: the report's paid orders,
// money received (succeeded payments with the amount paid, and the parts
// of orders not paid), refunded and owed back, and outstanding (the open
// payments list's owed), and the report's own arithmetic: breakdowns that
// add up to the paid orders, methods that add up to the money received,
// income as received less refunded less owed back.
func yearReportTotals(ctx context.Context, svc *engine.Service, orgID int64) ([]Finding, error) {
	db := svc.DB()
	var periods []engine.MembershipPeriod
	if err := db.NewSelect().Model(&periods).Column("id", "name").Where("organisation_id = ?", orgID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("books: load periods: %w", err)
	}
	var out []Finding
	for _, p := range periods {
		r, err := report.Of(svc).YearReport(ctx, orgID, p.ID)
		if err != nil {
			return nil, err
		}
		var own struct {
			Paid, Received, Refunded, OwedBack, Parts int64
		}
		if err := db.NewSelect().Model((*engine.Order)(nil)).ColumnExpr("COALESCE(SUM(total_minor), 0)").
			Where("organisation_id = ? AND period_id = ? AND status = ?", orgID, p.ID, engine.OrderPaid).Scan(ctx, &own.Paid); err != nil {
			return nil, fmt.Errorf("books: sum paid orders: %w", err)
		}
		paid := "COALESCE(p.paid_amount_minor, p.amount_minor)"
		if err := db.NewSelect().TableExpr("payments AS p").Join("JOIN orders AS o ON o.id = p.order_id").
			ColumnExpr("COALESCE(SUM("+paid+"), 0)").
			ColumnExpr("COALESCE(SUM(CASE WHEN p.refund_status = ? THEN "+paid+" ELSE 0 END), 0)", engine.RefundDone).
			ColumnExpr("COALESCE(SUM(CASE WHEN p.refund_status = ? THEN "+paid+" ELSE 0 END), 0)", engine.RefundDue).
			Where("o.organisation_id = ? AND o.period_id = ? AND p.status = ?", orgID, p.ID, engine.PaymentSucceeded).
			Scan(ctx, &own.Received, &own.Refunded, &own.OwedBack); err != nil {
			return nil, fmt.Errorf("books: sum received payments: %w", err)
		}
		if err := db.NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
			Join("JOIN orders AS o ON o.id = p.order_id").ColumnExpr("COALESCE(SUM(e.amount_minor), 0)").
			Where("o.organisation_id = ? AND o.period_id = ? AND o.status <> ?", orgID, p.ID, engine.OrderPaid).
			Where("e.event_type = ? AND e.outcome = ?", payment.BankCaptureEvent, payment.PartialCaptureOutcome).Scan(ctx, &own.Parts); err != nil {
			return nil, fmt.Errorf("books: sum part payments: %w", err)
		}
		open, err := staff.Of(svc).OpenPayments(ctx, staff.OpenPaymentQuery{OrganisationID: orgID, PeriodID: p.ID})
		if err != nil {
			return nil, err
		}
		var outstanding int64
		for _, o := range open {
			outstanding += o.OwedMinor
		}
		ov, err := staff.Of(svc).SeasonOverview(ctx, orgID, p.ID)
		if err != nil {
			return nil, err
		}
		sum := func(rows []report.Amount) (n int64) {
			for _, a := range rows {
				n += a.AmountMinor
			}
			return n
		}
		var byMethod int64
		for _, m := range r.ByMethod {
			byMethod += m.ReceivedMinor
		}
		money := func(minor int64) string { return engine.FormatMoney(minor, r.Currency) }
		for _, c := range []struct {
			what      string
			got, want int64
		}{
			{"paid orders", r.PaidMinor, own.Paid},
			{"paid orders by membership type", sum(r.ByType), r.PaidMinor},
			{"paid orders by price rule", sum(r.ByRule), r.PaidMinor},
			{"money received", r.ReceivedMinor, own.Received + own.Parts},
			{"money received by payment method", byMethod, r.ReceivedMinor},
			{"part payments", r.PartialMinor, own.Parts},
			{"refunded", r.RefundedMinor, own.Refunded},
			{"owed back", r.OwedBackMinor, own.OwedBack},
			{"income", r.IncomeMinor, r.ReceivedMinor - r.RefundedMinor - r.OwedBackMinor},
			{"outstanding", r.OutstandingMinor, outstanding},
			{"money received, against the season overview's Received", r.ReceivedMinor, ov.ReceivedMinor},
			{"refunded, against the season overview's Refunded", r.RefundedMinor, ov.RefundedMinor},
		} {
			if c.got != c.want {
				out = append(out, Finding{Rule: RuleYearReport, Records: []string{fmt.Sprintf("period %d", p.ID)},
					Message: fmt.Sprintf("the year-end report of %s says %s %s; the records add up to %s", p.Name, c.what, money(c.got), money(c.want))})
			}
		}
	}
	return out, nil
}
