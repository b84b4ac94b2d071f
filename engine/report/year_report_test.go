package report_test

import (
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/definition"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/engine/report"
	"portal/engine/staff"
)

// reportSeason is a season registered and paid by bank transfer, and what
// the test did, to compare the report with.
type reportSeason struct {
	// Paid is the totals of the orders paid in full; Received the money
	// captured; Refunded what was given back; OwedBack a second payment
	// to return; Partial the part of an open order; Owed what the open
	// orders still owe.
	Paid, Received, Refunded, OwedBack, Partial, Owed int64
	PaidOrders, OpenOrders                            int
}

// seedReportSeason registers five households with the demo's price
// rules (adult and junior fees, joining fee, loyalty discount, early
// bird, administration fee): one paid then refunded, one paid in two
// parts, one paid and then paid a second time (owed back), one paid in
// part and one not at all.
func seedReportSeason(t *testing.T, f *enginetest.Fixture) reportSeason {
	t.Helper()
	var s reportSeason
	actor := engine.Actor{Name: "treasurer@example.org"}
	commit := func(userKey string, persons ...int64) (int64, engine.Order) {
		if len(persons) == 0 {
			form, _ := f.Load(userKey)
			persons = enginetest.PersonIDs(form)
		}
		r := f.Start(userKey, persons...)
		r.Commit()
		return r.ID, f.Orders(r.ID)[0]
	}
	capture := func(o engine.Order, amount int64, id string) {
		f.Capture(payment.Capture{Reference: o.PayReference, AmountMinor: amount, ID: id})
		s.Received += amount
	}
	// The demo household, an adult who renews and a new junior: paid,
	// then refunded by the treasurer.
	id0, o0 := commit(engine.DemoUserKey, enginetest.Alex, enginetest.Robin)
	capture(o0, o0.TotalMinor, "c0")
	var paid0 engine.Payment
	for _, p := range f.Payments(id0) {
		if p.Status == engine.PaymentSucceeded {
			paid0 = p
		}
	}
	if err := staff.Of(f.Svc).RefundPayment(f.Ctx, actor, 1, id0, paid0.Reference, "left the club"); err != nil {
		t.Fatal(err)
	}
	s.Refunded += o0.TotalMinor
	// Two new adults paying in two parts.
	_, o1 := commit("demo-1")
	capture(o1, 5000, "c1a")
	capture(o1, o1.TotalMinor-5000, "c1b")
	// Paid, then the same amount arrives again: owed back.
	_, o2 := commit("demo-2")
	capture(o2, o2.TotalMinor, "c2a")
	capture(o2, o2.TotalMinor, "c2b")
	s.OwedBack += o2.TotalMinor
	// A part arrived, the rest is owed.
	_, o3 := commit("demo-3")
	capture(o3, 7000, "c3")
	s.Partial, s.Owed = 7000, o3.TotalMinor-7000
	// Nothing paid.
	_, o4 := commit("demo-4")
	s.Owed += o4.TotalMinor
	s.Paid = o0.TotalMinor + o1.TotalMinor + o2.TotalMinor
	s.PaidOrders, s.OpenOrders = 3, 2
	return s
}

// sqlSum runs a query that returns one number.
func sqlSum(t *testing.T, db *bun.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestYearReportAddsUpTheOrders: the report's figures equal the season
// the test registered and the orders, payments and memberships in SQL;
// its breakdowns add up to their totals.
func TestYearReportAddsUpTheOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		f := enginetest.BankFixture(t, db, 4)
		want := seedReportSeason(t, f)
		// A price code the setup no longer has: the first line of the first
		// paid order, renamed. It follows the setup's rules, named by the
		// label of its first line.
		if _, err := db.ExecContext(f.Ctx, `UPDATE order_lines SET code = 'retired-fee', description = 'Retired fee – Kim Example'
			WHERE order_id = (SELECT MIN(id) FROM orders WHERE period_id = ? AND status = 'Paid') AND line_no = (SELECT MIN(l.line_no) FROM order_lines l
			WHERE l.order_id = (SELECT MIN(id) FROM orders WHERE period_id = ? AND status = 'Paid'))`, engine.DemoPeriodID, engine.DemoPeriodID); err != nil {
			t.Fatal(err)
		}
		// A member of a paid registration whose membership was made again
		// with the other type (the first one cancelled): their lines count
		// under the newest membership's type, once.
		var remade int64
		if err := db.NewRaw(`SELECT MIN(m.id) FROM memberships m JOIN orders o ON o.process_instance_id = m.process_instance_id
			WHERE o.period_id = ? AND o.status = 'Paid'`, engine.DemoPeriodID).Scan(f.Ctx, &remade); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(f.Ctx, `UPDATE memberships SET status = 'Cancelled' WHERE id = ?`, remade); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(f.Ctx, `INSERT INTO memberships (person_id, period_id, membership_type_id, member_type, status, process_instance_id, created_at)
			SELECT person_id, period_id, (SELECT MIN(t.id) FROM membership_types t WHERE t.organisation_id = 1 AND t.id <> m.membership_type_id),
			member_type, 'Active', process_instance_id, created_at FROM memberships m WHERE id = ?`, remade); err != nil {
			t.Fatal(err)
		}
		r, err := report.Of(f.Svc).YearReport(f.Ctx, 1, engine.DemoPeriodID)
		if err != nil {
			t.Fatal(err)
		}
		// What the test registered and paid.
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"paid orders", r.PaidMinor, want.Paid},
			{"paid order count", int64(r.PaidOrders), int64(want.PaidOrders)},
			{"received", r.ReceivedMinor, want.Received},
			{"part payments", r.PartialMinor, want.Partial},
			{"refunded", r.RefundedMinor, want.Refunded},
			{"owed back", r.OwedBackMinor, want.OwedBack},
			{"income", r.IncomeMinor, want.Received - want.Refunded - want.OwedBack},
			{"outstanding", r.OutstandingMinor, want.Owed},
			{"open orders", int64(r.OpenOrders), int64(want.OpenOrders)},
		} {
			if c.got != c.want {
				t.Errorf("%s: report %d, registered %d", c.name, c.got, c.want)
			}
		}
		// The same figures, asked of the database directly.
		const period = engine.DemoPeriodID
		sqlFigures := []struct {
			name  string
			got   int64
			query string
		}{
			{"paid orders", r.PaidMinor, "SELECT COALESCE(SUM(total_minor), 0) FROM orders WHERE period_id = ? AND status = 'Paid'"},
			{"order lines of paid orders", r.PaidMinor, "SELECT COALESCE(SUM(l.amount_minor), 0) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.period_id = ? AND o.status = 'Paid'"},
			{"received", r.ReceivedMinor - r.PartialMinor, "SELECT COALESCE(SUM(COALESCE(p.paid_amount_minor, p.amount_minor)), 0) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.period_id = ? AND p.status = 'SUCCEEDED'"},
			{"refunded", r.RefundedMinor, "SELECT COALESCE(SUM(p.amount_minor), 0) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.period_id = ? AND p.refund_status = 'DONE'"},
			{"owed back", r.OwedBackMinor, "SELECT COALESCE(SUM(p.amount_minor), 0) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.period_id = ? AND p.refund_status = 'DUE'"},
			{"outstanding", r.OutstandingMinor, `SELECT COALESCE(SUM(o.total_minor), 0) - (SELECT COALESCE(SUM(e.amount_minor), 0) FROM payment_events e JOIN payments p ON p.reference = e.reference
				JOIN orders o2 ON o2.id = p.order_id WHERE o2.period_id = o.period_id AND o2.status = 'Unpaid' AND e.outcome = 'partial')
				FROM orders o WHERE o.period_id = ? AND o.status = 'Unpaid' GROUP BY o.period_id`},
			{"active members", int64(r.ActiveMembers), "SELECT COUNT(*) FROM memberships WHERE period_id = ? AND status = 'Active'"},
			{"pending members", int64(r.PendingMembers), "SELECT COUNT(*) FROM memberships WHERE period_id = ? AND status = 'Pending Payment'"},
		}
		for _, c := range sqlFigures {
			if want := sqlSum(t, db, c.query, period); c.got != want {
				t.Errorf("%s: report %d, SQL %d", c.name, c.got, want)
			}
		}
		// The breakdowns split their totals exactly.
		var byType, byRule, byMethod int64
		for _, a := range r.ByType {
			byType += a.AmountMinor
			if a.Key == "" {
				continue
			}
			// A line's type: its registration's newest membership for its
			// person in the period.
			const typed = `FROM order_lines l JOIN orders o ON o.id = l.order_id
				JOIN membership_types mt ON mt.id = (SELECT m.membership_type_id FROM memberships m WHERE m.period_id = o.period_id
					AND m.process_instance_id = o.process_instance_id AND m.person_id = l.person_id ORDER BY m.id DESC LIMIT 1)
				WHERE o.period_id = ? AND o.status = 'Paid' AND mt.code = ?`
			if got := sqlSum(t, db, `SELECT COALESCE(SUM(l.amount_minor), 0) `+typed, period, a.Key); got != a.AmountMinor {
				t.Errorf("type %s: report %d, SQL %d", a.Key, a.AmountMinor, got)
			}
			if got := sqlSum(t, db, `SELECT COUNT(*) `+typed, period, a.Key); got != int64(a.Lines) {
				t.Errorf("type %s: report %d lines, SQL %d", a.Key, a.Lines, got)
			}
		}
		for _, a := range r.ByRule {
			byRule += a.AmountMinor
			got := sqlSum(t, db, "SELECT COALESCE(SUM(l.amount_minor), 0) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.period_id = ? AND o.status = 'Paid' AND l.code = ?", period, a.Key)
			if got != a.AmountMinor {
				t.Errorf("rule %s: report %d, SQL %d", a.Key, a.AmountMinor, got)
			}
			if n := sqlSum(t, db, "SELECT COUNT(*) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.period_id = ? AND o.status = 'Paid' AND l.code = ?", period, a.Key); int64(a.Lines) != n {
				t.Errorf("rule %s: report %d lines, SQL %d", a.Key, a.Lines, n)
			}
		}
		// The codes the setup has no rule for follow the rules in the order
		// met: the renamed first line before the priced answer's.
		retired := slices.IndexFunc(r.ByRule, func(a report.Amount) bool { return a.Key == "retired-fee" })
		insurance := slices.IndexFunc(r.ByRule, func(a report.Amount) bool { return a.Key == "insurance" })
		if retired < 0 || insurance < retired {
			t.Errorf("rows by rule %+v: want retired-fee, then insurance, after the rules", r.ByRule)
		} else if a := r.ByRule[retired]; a.Name != "Retired fee" || a.Lines != 1 || a.AmountMinor == 0 {
			t.Errorf("the code the setup no longer has: %+v, want it named by its line", a)
		}
		var typedLines int
		for _, a := range r.ByType {
			typedLines += a.Lines
		}
		if n := sqlSum(t, db, "SELECT COUNT(*) FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.period_id = ? AND o.status = 'Paid'", period); int64(typedLines) != n {
			t.Errorf("lines by type: %d, SQL %d", typedLines, n)
		}
		for _, m := range r.ByMethod {
			byMethod += m.NetMinor()
		}
		if byType != r.PaidMinor || byRule != r.PaidMinor || byMethod != r.IncomeMinor {
			t.Errorf("breakdowns: by type %d, by rule %d of %d; by method %d of %d", byType, byRule, r.PaidMinor, byMethod, r.IncomeMinor)
		}
		// Both types were paid for, and several rules applied (a fee, a
		// discount, the administration fee).
		amounts := map[string]int64{}
		for _, a := range append(r.ByType, r.ByRule...) {
			amounts[a.Key] = a.AmountMinor
		}
		if amounts["ADULT"] <= 0 || amounts["JUNIOR"] <= 0 || amounts["admin-fee"] != 3*250 || amounts["loyalty"] >= 0 {
			t.Errorf("breakdown amounts %v", amounts)
		}
		if len(r.ByMethod) != 1 || r.ByMethod[0].Provider != payment.BankTransferProvider {
			t.Errorf("methods %+v", r.ByMethod)
		}
		var typed int
		for _, m := range r.MembersByType {
			typed += m.Active + m.Pending
		}
		var aged int
		for _, m := range r.MembersByAge {
			aged += m.Active + m.Pending
		}
		if typed != r.ActiveMembers+r.PendingMembers || aged != typed || r.PendingMembers != 4 {
			t.Errorf("members: by type %d, by age %d, active %d, pending %d", typed, aged, r.ActiveMembers, r.PendingMembers)
		}
		// The age groups again, from the persons as bun reads them: the
		// report scans birth dates as plain columns (engine.Date).
		var live []struct {
			Status engine.MembershipStatus `bun:"status"`
			Born   time.Time               `bun:"date_of_birth"`
		}
		if err := db.NewSelect().TableExpr("memberships AS m").Join("JOIN persons AS pe ON pe.id = m.person_id").ColumnExpr("m.status, pe.date_of_birth").
			Where("m.period_id = ? AND m.status IN (?, ?)", period, engine.MembershipPending, engine.MembershipActive).Scan(f.Ctx, &live); err != nil {
			t.Fatal(err)
		}
		byAge := make([]report.Members, len(staff.AgeGroups))
		for _, m := range live {
			age := definition.AgeAt(m.Born, r.Period.StartDate)
			i := slices.IndexFunc(staff.AgeGroups, func(g struct {
				Name  string
				Below int
			}) bool {
				return age < g.Below
			})
			if m.Status == engine.MembershipActive {
				byAge[i].Active++
			} else {
				byAge[i].Pending++
			}
		}
		for i, m := range r.MembersByAge {
			if m.Active != byAge[i].Active || m.Pending != byAge[i].Pending {
				t.Errorf("age group %s: report %d active, %d pending; persons %d, %d", m.Name, m.Active, m.Pending, byAge[i].Active, byAge[i].Pending)
			}
		}
		// The overview says the same of the period's money and members:
		// one definition on both pages.
		o, err := staff.Of(f.Svc).SeasonOverview(f.Ctx, 1, period)
		if err != nil {
			t.Fatal(err)
		}
		if o.ReceivedMinor != r.ReceivedMinor || o.RefundedMinor != r.RefundedMinor {
			t.Errorf("overview: received %d, refunded %d; report %d, %d", o.ReceivedMinor, o.RefundedMinor, r.ReceivedMinor, r.RefundedMinor)
		}
		for i, m := range r.MembersByAge {
			if o.ByAge[i].Count != m.Active+m.Pending || o.ByAge[i].Pending != m.Pending {
				t.Errorf("overview age group %s: %+v, report %+v", m.Name, o.ByAge[i], m)
			}
		}
		overviewTyped := map[string]staff.NamedCount{}
		for _, c := range o.ByType {
			overviewTyped[c.Name] = c
		}
		for _, m := range r.MembersByType {
			if c := overviewTyped[m.Name]; c.Count != m.Active+m.Pending || c.Pending != m.Pending {
				t.Errorf("overview type %s: %+v, report %+v", m.Name, c, m)
			}
		}
		var paidToday int
		for _, d := range o.Days {
			paidToday += d.Payments
		}
		if n := sqlSum(t, db, "SELECT COUNT(*) FROM payments p JOIN orders o ON o.id = p.order_id WHERE o.period_id = ? AND p.status = ?", period, engine.PaymentSucceeded); int64(paidToday) != n || n == 0 {
			t.Errorf("overview: %d payments in the chart, %d succeeded", paidToday, n)
		}
		if _, err := report.Of(f.Svc).YearReport(f.Ctx, 2, engine.DemoPeriodID); engine.ErrorCode(err) != engine.CodeNotFound {
			t.Errorf("another organisation's period: %v", err)
		}
	})
}
