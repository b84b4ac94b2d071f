package report

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/engine/staff"
)

// The year-end report for a club's general meeting: one period's money
// and members. Every figure comes from YearReport, so the staff page,
// its CSV and its PDF never disagree.
//
// What the figures mean (docs/STAFF.md says the same for treasurers):
//
//   - Figures belong to the membership period of the order, whatever the
//     day the money arrived: the report of a season is its registrations'.
//   - Paid orders: the totals of the period's orders that are paid. The
//     breakdowns by membership type and by price rule split exactly this
//     sum, line by line of the frozen order lines (a line for a person
//     counts for the type of that person's membership in the
//     registration; a line for the whole order, such as an
//     administration fee, under "for the whole order").
//   - Received: money that came in for the period's orders: each
//     succeeded payment attempt with the amount paid (a second payment of
//     an order that was paid already included), and the part payments of
//     orders not paid yet (bank transfers short of the amount). Part
//     payments of an order that later completed are inside the payment
//     that completed it and are not counted twice.
//   - Refunded: money given back (refund recorded); owed back: refunds
//     due but not made yet (a second payment to return).
//   - Income: received less refunded less owed back: the money the club
//     keeps.
//   - Outstanding: what the open orders still owe after their part
//     payments (the open payments list's sum).
//   - Members: memberships of the period, active (paid) and pending
//     payment apart, by type and by age group at the period's start.

// YearReport is one period's figures; money in minor units of Currency.
type YearReport struct {
	Period   engine.MembershipPeriod
	Currency string
	// PaidOrders counts the paid orders, PaidMinor adds up their totals.
	PaidOrders int
	PaidMinor  int64
	// ByType and ByRule split PaidMinor by membership type and by price
	// rule; each adds up to PaidMinor.
	ByType, ByRule []Amount
	// ByMethod is the money per payment method (provider), in the order
	// of the most received first.
	ByMethod []Method
	// ReceivedMinor adds up ByMethod's received money; PartialMinor is
	// the part of it that open (or cancelled) orders' part payments
	// brought, from PartialOrders orders.
	ReceivedMinor, PartialMinor  int64
	PartialOrders                int
	RefundedMinor, OwedBackMinor int64
	// IncomeMinor is ReceivedMinor less RefundedMinor and OwedBackMinor.
	IncomeMinor int64
	// OpenOrders counts the orders waiting for payment and
	// OutstandingMinor what they still owe.
	OpenOrders       int
	OutstandingMinor int64
	// MembersByType and MembersByAge count the period's memberships.
	MembersByType, MembersByAge   []Members
	ActiveMembers, PendingMembers int
}

// Amount is one row of a breakdown of the paid orders.
type Amount struct {
	// Key is the membership type's code or the price rule's code; ""
	// for the lines of the whole order (ByType).
	Key string
	// Name is the stored name (the default language's), Texts the name
	// per language.
	Name  string
	Texts engine.Texts
	// Kind is the price rule's kind (ByRule), or LineOption.
	Kind string
	// Lines counts the order lines.
	Lines       int
	AmountMinor int64
}

// Method is the money of one payment method.
type Method struct {
	Provider string
	// Payments counts the succeeded attempts and the part payments.
	Payments                                    int
	ReceivedMinor, RefundedMinor, OwedBackMinor int64
}

// NetMinor is what the method brought and the club keeps.
func (m Method) NetMinor() int64 { return m.ReceivedMinor - m.RefundedMinor - m.OwedBackMinor }

// Members counts memberships of a type or an age group.
type Members struct {
	// Key is the type's code, or the age group's index in AgeGroups.
	Key             string
	Name            string
	Texts           engine.Texts
	Active, Pending int
}

// YearReport gathers the report of one period of an organisation.
func (s *Service) YearReport(ctx context.Context, orgID, periodID int64) (r *YearReport, err error) {
	r = &YearReport{}
	if err := s.DB().NewSelect().Model(&r.Period).Where("id = ? AND organisation_id = ?", periodID, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "period")
	}
	r.Currency = r.Period.Currency
	var types []engine.MembershipType
	if err := s.DB().NewSelect().Model(&types).Where("organisation_id = ?", orgID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load membership types: %w", err)
	}
	// The four parts read at once: one after the other they were some
	// 60 ms of statements for a club of 5,000 registrations (issue 42).
	// Each fills fields of r no other touches.
	err = engine.AtOnce(ctx,
		func(ctx context.Context) error { return s.reportPaidOrders(ctx, r, orgID, types) },
		func(ctx context.Context) error { return s.reportMoney(ctx, r, orgID) },
		func(ctx context.Context) error { return s.reportOpenOrders(ctx, r, orgID) },
		func(ctx context.Context) error { return s.reportMembers(ctx, r, types) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// reportOpenOrders fills the orders waiting for payment and what they
// still owe, as the open payments list counts them.
func (s *Service) reportOpenOrders(ctx context.Context, r *YearReport, orgID int64) error {
	var open struct {
		N    int   `bun:"n"`
		Owed int64 `bun:"owed"`
	}
	q := staff.OpenPaymentQuery{OrganisationID: orgID, PeriodID: r.Period.ID}
	if err := s.DB().NewSelect().TableExpr("(?) AS op", q.OpenPaymentsSelect(s.DB(), s.Clock().UTC())).
		ColumnExpr("COUNT(*) AS n, COALESCE(SUM(op.owed_minor), 0) AS owed").Scan(ctx, &open); err != nil {
		return fmt.Errorf("sum open orders: %w", err)
	}
	r.OpenOrders, r.OutstandingMinor = open.N, open.Owed
	return nil
}

// reportPaidOrders fills the paid orders and their breakdowns.
func (s *Service) reportPaidOrders(ctx context.Context, r *YearReport, orgID int64, types []engine.MembershipType) error {
	var paid struct {
		N     int   `bun:"n"`
		Total int64 `bun:"total"`
	}
	if err := s.DB().NewSelect().Model((*engine.Order)(nil)).ColumnExpr("COUNT(*) AS n, COALESCE(SUM(total_minor), 0) AS total").
		Where("organisation_id = ? AND period_id = ? AND status = ?", orgID, r.Period.ID, engine.OrderPaid).Scan(ctx, &paid); err != nil {
		return fmt.Errorf("sum paid orders: %w", err)
	}
	r.PaidOrders, r.PaidMinor = paid.N, paid.Total
	var rules []engine.PriceRule
	if err := s.DB().NewSelect().Model(&rules).Where("period_id = ?", r.Period.ID).Order("id").Scan(ctx); err != nil {
		return fmt.Errorf("load price rules: %w", err)
	}
	// Rows in the order of the setup (types by id, rules by id), then
	// what the setup no longer has, in the order met.
	for _, t := range types {
		r.ByType = append(r.ByType, Amount{Key: t.Code, Name: t.Name, Texts: t.NameTexts})
	}
	for _, pr := range rules {
		r.ByRule = append(r.ByRule, Amount{Key: pr.Code, Name: pr.Label, Texts: pr.LabelTexts, Kind: string(pr.Kind)})
	}
	typeByID := map[int64]engine.MembershipType{}
	for _, t := range types {
		typeByID[t.ID] = t
	}
	// The lines are summed by the database, per membership type, kind
	// and code: a club of 5,000 registrations has some 12,000 paid lines,
	// and reading them one by one (with the 7,000 memberships that give
	// their types) was half of the staff pages' CPU (issue 42). A line's
	// type is that of the newest membership its registration made for its
	// person in the period. Each sum carries its first line (first): the
	// order id and the line number as one figure, so that rows the setup
	// no longer has keep the order in which the lines meet them, and are
	// named after their first line's description, read afterwards.
	type linePos struct{ orderID, lineNo int64 }
	type lineSum struct {
		typeID        sql.NullInt64
		kind, code    string
		amount, lines int64
		first         int64
	}
	var sums []lineSum
	err := engine.EachRow(ctx, s.DB(), func(rows *sql.Rows) error {
		var l lineSum
		if err := rows.Scan(&l.typeID, &l.kind, &l.code, &l.amount, &l.lines, &l.first); err != nil {
			return err
		}
		sums = append(sums, l)
		return nil
	}, `SELECT t.membership_type_id, ol.kind, ol.code, CAST(SUM(ol.amount_minor) AS BIGINT), COUNT(*), MIN(ol.order_id * ? + ol.line_no)
		FROM order_lines AS ol JOIN orders AS o ON o.id = ol.order_id
		LEFT JOIN (`+newestMembershipTypes(s.DB())+`) AS t ON t.process_instance_id = o.process_instance_id AND t.person_id = ol.person_id
		WHERE o.organisation_id = ? AND o.period_id = ? AND o.status = ?
		GROUP BY t.membership_type_id, ol.kind, ol.code`, linesPerOrder, r.Period.ID, orgID, r.Period.ID, engine.OrderPaid)
	if err != nil {
		return fmt.Errorf("sum paid order lines: %w", err)
	}
	slices.SortFunc(sums, func(a, b lineSum) int { return cmp.Compare(a.first, b.first) })
	unnamed := map[int]linePos{} // index in ByRule: the row's first line
	var sum int64
	for _, l := range sums {
		sum += l.amount
		key, name := "", ""
		if t, ok := typeByID[l.typeID.Int64]; ok && l.typeID.Valid {
			key, name = t.Code, t.Name
		}
		addAmount(&r.ByType, key, func() Amount { return Amount{Key: key, Name: name} }, l.amount, int(l.lines))
		i := addAmount(&r.ByRule, l.code, func() Amount { return Amount{Key: l.code, Kind: l.kind} }, l.amount, int(l.lines))
		if _, named := unnamed[i]; !named && i >= len(rules) {
			unnamed[i] = linePos{l.first / linesPerOrder, l.first % linesPerOrder}
		}
	}
	if len(unnamed) > 0 {
		var orderIDs []int64
		for _, p := range unnamed {
			orderIDs = append(orderIDs, p.orderID)
		}
		var firsts []struct {
			OrderID     int64  `bun:"order_id"`
			LineNo      int64  `bun:"line_no"`
			Description string `bun:"description"`
		}
		if err := s.DB().NewSelect().TableExpr("order_lines").Column("order_id", "line_no", "description").
			Where("order_id IN (?)", bun.List(orderIDs)).Scan(ctx, &firsts); err != nil {
			return fmt.Errorf("load the names of retired price codes: %w", err)
		}
		for i, p := range unnamed {
			for _, f := range firsts {
				if f.OrderID == p.orderID && f.LineNo == p.lineNo {
					r.ByRule[i].Name, _, _ = strings.Cut(f.Description, " – ")
				}
			}
		}
	}
	if err := s.optionTexts(ctx, orgID, r); err != nil {
		return err
	}
	if rest := r.PaidMinor - sum; rest != 0 {
		// Orders without lines (made before lines were stored): counted,
		// under a row of their own, so that the breakdowns still add up.
		unitemised := func() Amount { return Amount{Key: "-", Kind: "-"} }
		addAmount(&r.ByType, "-", unitemised, rest, 1)
		addAmount(&r.ByRule, "-", unitemised, rest, 1)
	}
	return nil
}

// optionTexts gives the rows of priced answers (a definition step's
// price, such as accident insurance) their label per language from the
// period's definition, as price rules have theirs: the stored line holds
// the label in the language the member registered in.
func (s *Service) optionTexts(ctx context.Context, orgID int64, r *YearReport) error {
	var codes []string
	for _, a := range r.ByRule {
		if a.Kind == registration.LineOption && len(a.Texts) == 0 {
			codes = append(codes, a.Key)
		}
	}
	if len(codes) == 0 {
		return nil
	}
	var steps []engine.ProcessStep
	if err := s.DB().NewSelect().Model(&steps).Column("price_code", "texts").
		Where("price_code IN (?)", bun.List(codes)).
		Where("definition_id IN (?)", s.DB().NewSelect().Model((*engine.ProcessDefinition)(nil)).Column("id").
			Where("organisation_id = ? AND key = ?", orgID, r.Period.DefinitionKey)).
		Order("definition_id DESC").Scan(ctx); err != nil {
		return fmt.Errorf("load priced answers: %w", err)
	}
	labels := map[string]engine.Texts{}
	for _, st := range steps {
		if st.PriceCode == nil || labels[*st.PriceCode] != nil {
			continue // the newest version's label
		}
		texts, err := definition.ParseTexts(st.Texts)
		if err != nil || len(texts.Price) == 0 {
			continue
		}
		labels[*st.PriceCode] = engine.Texts(texts.Price)
	}
	for i, a := range r.ByRule {
		if t, ok := labels[a.Key]; ok && a.Kind == registration.LineOption && len(a.Texts) == 0 {
			r.ByRule[i].Texts = t
		}
	}
	return nil
}

// addAmount adds lines lines of amount in all to the row of rows with key
// (a new row made by row at the end when none has it) and returns the
// row's index.
func addAmount(rows *[]Amount, key string, row func() Amount, amount int64, lines int) int {
	i := slices.IndexFunc(*rows, func(x Amount) bool { return x.Key == key })
	if i < 0 {
		*rows = append(*rows, row())
		i = len(*rows) - 1
	}
	(*rows)[i].Lines += lines
	(*rows)[i].AmountMinor += amount
	return i
}

// linesPerOrder bounds an order's line numbers for the first line's
// figure (order id × linesPerOrder + line number): an order has a few
// lines per person of one registration.
const linesPerOrder = 1 << 20

// newestMembershipTypes selects, for each registration and person with a
// membership in the period (its one argument), the type of the newest.
// PostgreSQL says so with DISTINCT ON; SQLite takes a bare column's value
// from the row whose MAX is the group's.
func newestMembershipTypes(db bun.IDB) string {
	if db.Dialect().Name() == dialect.PG {
		return `SELECT DISTINCT ON (process_instance_id, person_id) process_instance_id, person_id, membership_type_id
			FROM memberships WHERE period_id = ? AND process_instance_id IS NOT NULL
			ORDER BY process_instance_id, person_id, id DESC`
	}
	return `SELECT process_instance_id, person_id, membership_type_id, MAX(id)
		FROM memberships WHERE period_id = ? AND process_instance_id IS NOT NULL
		GROUP BY process_instance_id, person_id`
}

// reportMoney fills the money received, refunded and owed back, per
// payment method.
func (s *Service) reportMoney(ctx context.Context, r *YearReport, orgID int64) error {
	var pays []struct {
		Provider     string              `bun:"provider"`
		AmountMinor  int64               `bun:"amount_minor"`
		PaidMinor    *int64              `bun:"paid_amount_minor"`
		RefundStatus engine.RefundStatus `bun:"refund_status"`
	}
	ofPeriod, args := engine.OrderOf(s.DB(), "p.order_id", orgID, r.Period.ID)
	if err := s.DB().NewSelect().TableExpr("payments AS p").
		ColumnExpr("p.provider, p.amount_minor, p.paid_amount_minor, p.refund_status").
		Where(ofPeriod, args...).Where("p.status = ?", engine.PaymentSucceeded).
		OrderExpr("p.id").Scan(ctx, &pays); err != nil {
		return fmt.Errorf("load received payments: %w", err)
	}
	var parts []struct {
		Provider    string `bun:"provider"`
		OrderID     int64  `bun:"order_id"`
		AmountMinor int64  `bun:"amount_minor"`
	}
	if err := s.DB().NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		Join("JOIN orders AS o ON o.id = p.order_id").ColumnExpr("p.provider, o.id AS order_id, e.amount_minor").
		Where("o.organisation_id = ? AND o.period_id = ? AND o.status <> ?", orgID, r.Period.ID, engine.OrderPaid).
		Where("e.event_type = ? AND e.outcome = ? AND e.amount_minor IS NOT NULL", payment.BankCaptureEvent, payment.PartialCaptureOutcome).
		OrderExpr("e.id").Scan(ctx, &parts); err != nil {
		return fmt.Errorf("load part payments: %w", err)
	}
	method := func(provider string) *Method {
		i := slices.IndexFunc(r.ByMethod, func(m Method) bool { return m.Provider == provider })
		if i < 0 {
			r.ByMethod = append(r.ByMethod, Method{Provider: provider})
			i = len(r.ByMethod) - 1
		}
		return &r.ByMethod[i]
	}
	for _, p := range pays {
		amount := p.AmountMinor
		if p.PaidMinor != nil {
			amount = *p.PaidMinor
		}
		m := method(p.Provider)
		m.Payments++
		m.ReceivedMinor += amount
		switch p.RefundStatus {
		case engine.RefundDone:
			m.RefundedMinor += amount
		case engine.RefundDue:
			m.OwedBackMinor += amount
		}
	}
	partOrders := map[int64]bool{}
	for _, p := range parts {
		m := method(p.Provider)
		m.Payments++
		m.ReceivedMinor += p.AmountMinor
		r.PartialMinor += p.AmountMinor
		partOrders[p.OrderID] = true
	}
	r.PartialOrders = len(partOrders)
	slices.SortStableFunc(r.ByMethod, func(a, b Method) int {
		switch {
		case a.ReceivedMinor > b.ReceivedMinor:
			return -1
		case a.ReceivedMinor < b.ReceivedMinor:
			return 1
		}
		return strings.Compare(a.Provider, b.Provider)
	})
	for _, m := range r.ByMethod {
		r.ReceivedMinor += m.ReceivedMinor
		r.RefundedMinor += m.RefundedMinor
		r.OwedBackMinor += m.OwedBackMinor
	}
	r.IncomeMinor = r.ReceivedMinor - r.RefundedMinor - r.OwedBackMinor
	return nil
}

// reportMembers counts the period's active and pending memberships by
// type and by age group at the period's start.
func (s *Service) reportMembers(ctx context.Context, r *YearReport, types []engine.MembershipType) error {
	for _, t := range types {
		r.MembersByType = append(r.MembersByType, Members{Key: t.Code, Name: t.Name, Texts: t.NameTexts})
	}
	for i, g := range staff.AgeGroups {
		r.MembersByAge = append(r.MembersByAge, Members{Key: fmt.Sprint(i), Name: g.Name})
	}
	typeIndex := map[int64]int{}
	for i, t := range types {
		typeIndex[t.ID] = i
	}
	count := func(row *Members, st engine.MembershipStatus) {
		if st == engine.MembershipActive {
			row.Active++
		} else {
			row.Pending++
		}
	}
	err := engine.EachRow(ctx, s.DB(), func(rows *sql.Rows) error {
		var (
			typeID int64
			status sql.RawBytes
			born   engine.Date
		)
		if err := rows.Scan(&typeID, &status, &born); err != nil {
			return err
		}
		st := engine.MembershipPending
		if string(status) == string(engine.MembershipActive) {
			st = engine.MembershipActive
			r.ActiveMembers++
		} else {
			r.PendingMembers++
		}
		if i, ok := typeIndex[typeID]; ok {
			count(&r.MembersByType[i], st)
		}
		if i := staff.AgeGroupAt(born.Time, r.Period.StartDate); i >= 0 {
			count(&r.MembersByAge[i], st)
		}
		return nil
	}, `SELECT m.membership_type_id, m.status, `+staff.BirthDateOfMember+` FROM memberships AS m
		WHERE m.period_id = ? AND m.status IN (?, ?)`, r.Period.ID, engine.MembershipPending, engine.MembershipActive)
	if err != nil {
		return fmt.Errorf("count members: %w", err)
	}
	return nil
}
