package staff

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"portal/engine/bankstatement"
	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/payments"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// staffOverview answers GET /staff?period=ID: the season overview of a
// period (by default the one running today, else the newest).
func (s *Server) staffOverview(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	ctx := c.Request().Context()
	periods, err := organisation.Of(s.engine).Periods(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	if len(periods) == 0 {
		m := staffview.MessageModel{Chrome: s.StaffChrome(c, staffpage.StaffTextIn(c).OvTitle), Message: staffpage.StaffTextIn(c).OvNoPeriod, Kind: "info"}
		return staffpage.StaffRender(c, http.StatusOK, staffview.Message(m))
	}
	periodID := staffpage.CurrentPeriod(periods, clock.Now())
	if raw := c.QueryParam("period"); raw != "" {
		if periodID, err = strconv.ParseInt(raw, 10, 64); err != nil {
			return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
		}
	}
	o, err := staff.Of(s.engine).SeasonOverview(ctx, u.OrganisationID, periodID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.OverviewModel{Chrome: s.StaffChrome(c, staffpage.StaffTextIn(c).OvTitle), Action: staffpage.RequestOf(c).StaffPath(""),
		Expected: staffpage.StaffMoney(c, o.ExpectedMinor, o.Period.Currency), Received: staffpage.StaffMoney(c, o.ReceivedMinor, o.Period.Currency),
		Refunded: staffpage.StaffMoney(c, o.RefundedMinor, o.Period.Currency), Chart: overviewChart(c, o),
		Attention: staffview.CountLink{Label: staffpage.StaffTextIn(c).OvAttention, Count: o.PaymentsNeedingAttention, URL: staffpage.RequestOf(c).StaffPath("/payments")}}
	failed, err := staff.Of(s.engine).StaffJobs(ctx, u.OrganisationID, staffJobsPortalWide(u))
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m.Jobs = staffview.CountLink{Label: staffpage.StaffTextIn(c).OvJobs, Count: len(failed), URL: staffpage.RequestOf(c).StaffPath("/jobs")}
	credits, err := bankstatement.Of(s.engine).CountUnmatchedCredits(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m.Credits = staffview.CountLink{Label: staffpage.StaffOpsTextIn(c).OvCredits, Count: credits, URL: staffpage.RequestOf(c).StaffPath("/payments")}
	if u.Role.AtLeast(staff.RoleTreasurer) {
		// The money's invariants as last night's check found them: a
		// treasurer's (and the maintainers') matter.
		findings, err := books.Findings(ctx, s.engine.DB(), u.OrganisationID)
		if err != nil {
			return s.StaffEngineError(c, err)
		}
		m.Books = staffview.CountLink{Label: staffpage.StaffOpsTextIn(c).OvBooks, Count: len(findings)}
		for _, f := range findings {
			m.Findings = append(m.Findings, f.Message)
		}
	}
	for _, p := range periods {
		m.Periods = append(m.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.Name, Selected: p.ID == periodID})
	}
	for _, st := range staff.RegistrationStates {
		link := registrations.ListURL(c, registrations.RegistrationsPath, staff.RegistrationQuery{PeriodID: periodID, State: st}, 1)
		if st == staff.RegAwaitingPayment && u.Role.AtLeast(staff.RoleTreasurer) {
			// Who owes what: the treasurer's list of the period's unpaid orders.
			link = payments.OpenPaymentsURL(c, server.OpenPaymentsPath, staff.OpenPaymentQuery{PeriodID: periodID})
		}
		m.States = append(m.States, staffview.CountLink{Label: registrations.StateLabel(c, st), Key: string(st), Count: o.ByState[st], URL: link})
	}
	if u.Role.AtLeast(staff.RoleTreasurer) {
		m.OpenPaymentsURL = payments.OpenPaymentsURL(c, server.OpenPaymentsPath, staff.OpenPaymentQuery{PeriodID: periodID})
	}
	m.MembersTotal.Label = staffview.ListTextIn(ctx).MembersTotal
	for _, t := range o.ByType {
		row := memberCount(t.Name, t)
		m.Members = append(m.Members, row)
		m.MembersTotal.Active += row.Active
		m.MembersTotal.Pending += row.Pending
		m.MembersTotal.Total += row.Total
	}
	for i, a := range o.ByAge {
		m.Ages = append(m.Ages, memberCount(staffpage.AgeGroupLabel(c, i), a))
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Overview(m))
}

// memberCount splits a count of live memberships into active and
// awaiting payment.
func memberCount(label string, n staff.NamedCount) staffview.MemberCount {
	return staffview.MemberCount{Label: label, Active: n.Count - n.Pending, Pending: n.Pending, Total: n.Count}
}

// overviewChart lays out the bars of the per-day chart: per day a pair of
// bars, registrations and payments, scaled to the busiest day.
func overviewChart(c echo.Context, o *staff.SeasonOverview) staffview.Chart {
	const dayWidth, barWidth, height = 20, 8, 100
	ch := staffview.Chart{Width: dayWidth * len(o.Days), Height: height}
	regs, pays := 0, 0
	for _, d := range o.Days {
		ch.Max = max(ch.Max, d.Registrations, d.Payments)
		regs += d.Registrations
		pays += d.Payments
	}
	scale := func(n int) int {
		if ch.Max == 0 {
			return 0
		}
		return n * height / ch.Max
	}
	for i, d := range o.Days {
		day := staffpage.StaffDate(c, d.Day)
		if d.Registrations > 0 || d.Payments > 0 {
			ch.Days = append(ch.Days, staffview.ChartDay{Day: day, Registrations: d.Registrations, Payments: d.Payments})
		}
		if h := scale(d.Registrations); h > 0 {
			ch.Bars = append(ch.Bars, staffview.ChartBar{X: i*dayWidth + 2, Y: height - h, W: barWidth, H: h, Series: "registrations",
				Title: fmt.Sprintf("%s: %d %s", day, d.Registrations, staffpage.StaffTextIn(c).OvChartRegistrations)})
		}
		if h := scale(d.Payments); h > 0 {
			ch.Bars = append(ch.Bars, staffview.ChartBar{X: i*dayWidth + 2 + barWidth, Y: height - h, W: barWidth, H: h, Series: "payments",
				Title: fmt.Sprintf("%s: %d %s", day, d.Payments, staffpage.StaffTextIn(c).OvChartPayments)})
		}
	}
	if n := len(o.Days); n > 0 {
		ch.FirstDay, ch.MidDay, ch.LastDay = staffpage.StaffDate(c, o.Days[0].Day), staffpage.StaffDate(c, o.Days[n/2].Day), staffpage.StaffDate(c, o.Days[n-1].Day)
	}
	ch.Scale = fmt.Sprintf(staffview.ListTextIn(c.Request().Context()).ChartScale, ch.Max)
	ch.Summary = fmt.Sprintf(staffpage.StaffTextIn(c).OvChartSummary, regs, pays, len(o.Days))
	return ch
}
