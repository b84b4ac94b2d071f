package staff

import (
	"context"
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

// SeasonOverview gathers the overview of one period of an organisation.
func (s *Service) SeasonOverview(ctx context.Context, orgID, periodID int64) (o *SeasonOverview, err error) {
	o = &SeasonOverview{ByState: map[RegistrationState]int{}}
	if err := s.DB().NewSelect().Model(&o.Period).Where("id = ? AND organisation_id = ?", periodID, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "period")
	}
	var states []struct {
		Status engine.ProcessState `bun:"status"`
		N      int                 `bun:"n"`
	}
	if err := s.DB().NewSelect().TableExpr("process_instances AS pi").ColumnExpr("pi.status, COUNT(*) AS n").
		Where("pi.organisation_id = ? AND pi.related_entity_type = ? AND pi.related_entity_id = ?", orgID, engine.EntityMembership, periodID).
		GroupExpr("pi.status").Scan(ctx, &states); err != nil {
		return nil, fmt.Errorf("count registrations: %w", err)
	}
	for _, st := range states {
		o.ByState[RegistrationStateOf(st.Status)] += st.N
	}
	var members []struct {
		Type   string                  `bun:"type_name"`
		Born   time.Time               `bun:"date_of_birth"`
		Status engine.MembershipStatus `bun:"status"`
	}
	if err := s.DB().NewSelect().TableExpr("memberships AS m").Join("JOIN membership_types AS t ON t.id = m.membership_type_id").
		Join("JOIN persons AS pe ON pe.id = m.person_id").ColumnExpr("t.name AS type_name, pe.date_of_birth, m.status").
		Where("m.period_id = ? AND m.status IN (?, ?)", periodID, engine.MembershipPending, engine.MembershipActive).Scan(ctx, &members); err != nil {
		return nil, fmt.Errorf("count members: %w", err)
	}
	byType, byAge := map[string]*NamedCount{}, make([]NamedCount, len(AgeGroups))
	var typeOrder []string
	for _, m := range members {
		t := byType[m.Type]
		if t == nil {
			t = &NamedCount{Name: m.Type}
			byType[m.Type] = t
			typeOrder = append(typeOrder, m.Type)
		}
		pending := 0
		if m.Status == engine.MembershipPending {
			pending = 1
		}
		t.Count++
		t.Pending += pending
		age := definition.AgeAt(m.Born, o.Period.StartDate)
		for i, g := range AgeGroups {
			if age < g.Below {
				byAge[i].Count++
				byAge[i].Pending += pending
				break
			}
		}
	}
	for _, t := range typeOrder {
		o.ByType = append(o.ByType, *byType[t])
	}
	for i, g := range AgeGroups {
		byAge[i].Name = g.Name
		o.ByAge = append(o.ByAge, byAge[i])
	}
	orders := s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id = ? AND period_id = ?", orgID, periodID)
	var money struct {
		Expected int64 `bun:"expected"`
	}
	if err := s.DB().NewSelect().Model((*engine.Order)(nil)).ColumnExpr("COALESCE(SUM(total_minor), 0) AS expected").
		Where("organisation_id = ? AND period_id = ? AND status IN (?, ?)", orgID, periodID, engine.OrderUnpaid, engine.OrderPaid).Scan(ctx, &money); err != nil {
		return nil, fmt.Errorf("sum orders: %w", err)
	}
	o.ExpectedMinor = money.Expected
	var pays []engine.Payment
	if err := s.DB().NewSelect().Model(&pays).Where("order_id IN (?)", orders).
		Where("status = ? OR problem <> '' OR refund_status <> ''", engine.PaymentSucceeded).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payments: %w", err)
	}
	since := s.Clock().Truncate(24*time.Hour).AddDate(0, 0, -(OverviewDays - 1))
	dayIndex := func(t time.Time) int { return int(t.UTC().Sub(since) / (24 * time.Hour)) }
	o.Days = make([]DayCount, OverviewDays)
	for i := range o.Days {
		o.Days[i].Day = since.AddDate(0, 0, i)
	}
	for _, p := range pays {
		if p.Status != engine.PaymentSucceeded {
			continue
		}
		amount := p.AmountMinor
		if p.PaidAmountMinor != nil {
			amount = *p.PaidAmountMinor
		}
		o.ReceivedMinor += amount
		if p.RefundStatus == engine.RefundDone {
			o.RefundedMinor += amount
		}
		if i := dayIndex(p.UpdatedAt); i >= 0 && i < OverviewDays {
			o.Days[i].Payments++
		}
	}
	// Part payments of orders not paid (yet) are money received too, as
	// the year-end report counts it: one definition on both pages.
	var parts int64
	if err := s.DB().NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		Join("JOIN orders AS o ON o.id = p.order_id").ColumnExpr("COALESCE(SUM(e.amount_minor), 0)").
		Where("o.organisation_id = ? AND o.period_id = ? AND o.status <> ?", orgID, periodID, engine.OrderPaid).
		Where("e.event_type = ? AND e.outcome = ? AND e.amount_minor IS NOT NULL", payment.BankCaptureEvent, payment.PartialCaptureOutcome).
		Scan(ctx, &parts); err != nil {
		return nil, fmt.Errorf("sum part payments: %w", err)
	}
	o.ReceivedMinor += parts
	var started []time.Time
	if err := s.DB().NewSelect().TableExpr("process_instances AS pi").ColumnExpr("pi.start_time").
		Where("pi.organisation_id = ? AND pi.related_entity_type = ? AND pi.related_entity_id = ? AND pi.start_time >= ?", orgID, engine.EntityMembership, periodID, since).
		Scan(ctx, &started); err != nil {
		return nil, fmt.Errorf("load registration days: %w", err)
	}
	for _, t := range started {
		if i := dayIndex(t); i >= 0 && i < OverviewDays {
			o.Days[i].Registrations++
		}
	}
	if o.PaymentsNeedingAttention, err = s.CountPaymentsNeedingAttention(ctx, AttentionQuery{OrganisationID: orgID}, periodID); err != nil {
		return nil, err
	}
	return o, nil
}
