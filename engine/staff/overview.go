package staff

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/payment"
)

// SeasonOverview is one period of a club at a glance.
type SeasonOverview struct {
	Period engine.MembershipPeriod
	// ByState counts registrations per state group.
	ByState map[RegistrationState]int
	// ByType and ByAge count persons with a live (pending or active)
	// membership, per membership type name and per age group at the
	// period's start; each count's Pending says how many of them still
	// wait for payment.
	ByType, ByAge []NamedCount
	// Money in the period's currency, in minor units: ordered (unpaid and
	// paid orders), received (succeeded payments and the part payments of
	// orders not paid: the year-end report's money received) and refunded.
	ExpectedMinor, ReceivedMinor, RefundedMinor int64
	// Days are the last OverviewDays days, oldest first: registrations
	// started and payments received per day.
	Days []DayCount
	// PaymentsNeedingAttention counts the period's attempts the payments
	// page lists (see Service.PaymentsNeedingAttention).
	PaymentsNeedingAttention int
}

// NamedCount is a label and a count; Pending is the part of Count that
// waits for payment (memberships pending payment), where that applies.
type NamedCount struct {
	Name           string
	Count, Pending int
}

// DayCount is one day of the chart.
type DayCount struct {
	Day                     time.Time
	Registrations, Payments int
}

// OverviewDays is how many days the overview's chart shows.
const OverviewDays = 30

// AgeGroups are the overview's age groups: a person falls in the first
// whose upper bound is above their age at the period's start.
var AgeGroups = []struct {
	Name  string
	Below int
}{{"under 12", 12}, {"12–17", 18}, {"18–25", 26}, {"26–64", 65}, {"65 and over", 1000}}

// BirthDateOfMember is, in a query over memberships AS m, the date of
// birth of the membership's person, looked up by id. A join to persons
// says the same, but PostgreSQL plans it as a hash over every person of
// every club (100,000 in a federation, to read a club's 6,000: 18 to
// 30 ms; looked up, 9 ms; issue 42).
const BirthDateOfMember = "(SELECT pe.date_of_birth FROM persons AS pe WHERE pe.id = m.person_id)"

// AgeGroupAt is the index in AgeGroups of a person born on born, by their
// age on day at (a period's start); -1 when no group takes that age.
func AgeGroupAt(born, at time.Time) int {
	age := definition.AgeAt(born, at)
	for i, g := range AgeGroups {
		if age < g.Below {
			return i
		}
	}
	return -1
}

// SeasonOverview gathers the overview of one period of an organisation.
func (s *Service) SeasonOverview(ctx context.Context, orgID, periodID int64) (o *SeasonOverview, err error) {
	o = &SeasonOverview{ByState: map[RegistrationState]int{}}
	if err := s.DB().NewSelect().Model(&o.Period).Where("id = ? AND organisation_id = ?", periodID, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "period")
	}
	since := s.Clock().Truncate(24*time.Hour).AddDate(0, 0, -(OverviewDays - 1))
	o.Days = make([]DayCount, OverviewDays)
	for i := range o.Days {
		o.Days[i].Day = since.AddDate(0, 0, i)
	}
	// The parts read at once: one after the other they were some 40 ms
	// of statements for a club of 5,000 registrations (issue 42). Each
	// fills fields of o no other touches.
	err = engine.AtOnce(ctx,
		func(ctx context.Context) error { return s.overviewRegistrations(ctx, o, orgID, since) },
		func(ctx context.Context) error { return s.overviewMembers(ctx, o) },
		func(ctx context.Context) error { return s.overviewMoney(ctx, o, orgID, since) },
		func(ctx context.Context) (err error) {
			o.PaymentsNeedingAttention, err = s.CountPaymentsNeedingAttention(ctx, AttentionQuery{OrganisationID: orgID}, periodID)
			return err
		})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// dayIndex is t's day among the overview's days from since (out of range
// when outside them).
func dayIndex(since, t time.Time) int { return int(t.UTC().Sub(since) / (24 * time.Hour)) }

// overviewRegistrations fills the registrations by state and the days'
// registrations.
func (s *Service) overviewRegistrations(ctx context.Context, o *SeasonOverview, orgID int64, since time.Time) error {
	periodID := o.Period.ID
	var states []struct {
		Status engine.ProcessState `bun:"status"`
		N      int                 `bun:"n"`
	}
	if err := s.DB().NewSelect().TableExpr("process_instances AS pi").ColumnExpr("pi.status, COUNT(*) AS n").
		Where("pi.organisation_id = ? AND pi.related_entity_type = ? AND pi.related_entity_id = ?", orgID, engine.EntityMembership, periodID).
		GroupExpr("pi.status").Scan(ctx, &states); err != nil {
		return fmt.Errorf("count registrations: %w", err)
	}
	for _, st := range states {
		o.ByState[RegistrationStateOf(st.Status)] += st.N
	}
	var started []time.Time
	if err := s.DB().NewSelect().TableExpr("process_instances AS pi").ColumnExpr("pi.start_time").
		Where("pi.organisation_id = ? AND pi.related_entity_type = ? AND pi.related_entity_id = ? AND pi.start_time >= ?", orgID, engine.EntityMembership, periodID, since).
		Scan(ctx, &started); err != nil {
		return fmt.Errorf("load registration days: %w", err)
	}
	for _, t := range started {
		if i := dayIndex(since, t); i >= 0 && i < OverviewDays {
			o.Days[i].Registrations++
		}
	}
	return nil
}

// overviewMembers fills the members by type and by age group at the
// period's start.
func (s *Service) overviewMembers(ctx context.Context, o *SeasonOverview) error {
	byType, byAge := map[string]*NamedCount{}, make([]NamedCount, len(AgeGroups))
	var typeOrder []string
	// Some 7,000 rows for a big club, scanned as plain columns (engine.EachRow).
	err := engine.EachRow(ctx, s.DB(), func(rows *sql.Rows) error {
		var (
			typeName, status sql.RawBytes
			born             engine.Date
		)
		if err := rows.Scan(&typeName, &born, &status); err != nil {
			return err
		}
		t := byType[string(typeName)]
		if t == nil {
			t = &NamedCount{Name: string(typeName)}
			byType[t.Name] = t
			typeOrder = append(typeOrder, t.Name)
		}
		pending := 0
		if string(status) == string(engine.MembershipPending) {
			pending = 1
		}
		t.Count++
		t.Pending += pending
		if i := AgeGroupAt(born.Time, o.Period.StartDate); i >= 0 {
			byAge[i].Count++
			byAge[i].Pending += pending
		}
		return nil
	}, `SELECT t.name, `+BirthDateOfMember+`, m.status FROM memberships AS m
		JOIN membership_types AS t ON t.id = m.membership_type_id
		WHERE m.period_id = ? AND m.status IN (?, ?)`, o.Period.ID, engine.MembershipPending, engine.MembershipActive)
	if err != nil {
		return fmt.Errorf("count members: %w", err)
	}
	for _, t := range typeOrder {
		o.ByType = append(o.ByType, *byType[t])
	}
	for i, g := range AgeGroups {
		byAge[i].Name = g.Name
		o.ByAge = append(o.ByAge, byAge[i])
	}
	return nil
}

// overviewMoney fills the money expected, received and refunded, and the
// days' payments.
func (s *Service) overviewMoney(ctx context.Context, o *SeasonOverview, orgID int64, since time.Time) error {
	periodID := o.Period.ID
	var money struct {
		Expected int64 `bun:"expected"`
	}
	if err := s.DB().NewSelect().Model((*engine.Order)(nil)).ColumnExpr("COALESCE(SUM(total_minor), 0) AS expected").
		Where("organisation_id = ? AND period_id = ? AND status IN (?, ?)", orgID, periodID, engine.OrderUnpaid, engine.OrderPaid).Scan(ctx, &money); err != nil {
		return fmt.Errorf("sum orders: %w", err)
	}
	o.ExpectedMinor = money.Expected
	// The succeeded payments: some 5,000 for a big club, scanned as plain
	// columns (engine.EachRow).
	ofPeriod, ofPeriodArgs := engine.OrderOf(s.DB(), "p.order_id", orgID, periodID)
	err := engine.EachRow(ctx, s.DB(), func(rows *sql.Rows) error {
		var (
			amount int64
			refund sql.RawBytes
			at     time.Time
		)
		if err := rows.Scan(&amount, &refund, &at); err != nil {
			return err
		}
		o.ReceivedMinor += amount
		if string(refund) == string(engine.RefundDone) {
			o.RefundedMinor += amount
		}
		if i := dayIndex(since, at); i >= 0 && i < OverviewDays {
			o.Days[i].Payments++
		}
		return nil
	}, `SELECT COALESCE(p.paid_amount_minor, p.amount_minor), p.refund_status, p.updated_at FROM payments AS p
		WHERE `+ofPeriod+` AND p.status = ?`, append(ofPeriodArgs, engine.PaymentSucceeded)...)
	if err != nil {
		return fmt.Errorf("load payments: %w", err)
	}
	// Part payments of orders not paid (yet) are money received too, as
	// the year-end report counts it: one definition on both pages.
	var parts int64
	if err := s.DB().NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		Join("JOIN orders AS o ON o.id = p.order_id").ColumnExpr("COALESCE(SUM(e.amount_minor), 0)").
		Where("o.organisation_id = ? AND o.period_id = ? AND o.status <> ?", orgID, periodID, engine.OrderPaid).
		Where("e.event_type = ? AND e.outcome = ? AND e.amount_minor IS NOT NULL", payment.BankCaptureEvent, payment.PartialCaptureOutcome).
		Scan(ctx, &parts); err != nil {
		return fmt.Errorf("sum part payments: %w", err)
	}
	o.ReceivedMinor += parts
	return nil
}
