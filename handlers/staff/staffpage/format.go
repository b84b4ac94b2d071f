package staffpage

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
	"portal/handlers/server"
)

// The staff pages write money, states and age groups as the member pages
// do: in the page's language, with its separators (804,50 EUR in German),
// never the stored spelling ("Pending Payment", "EUR 804.50").

// StaffMoney is an amount in the page's language (lang.Money, as the
// member pages write it).
func StaffMoney(c echo.Context, minor int64, currency string) string {
	return server.LangOf(c).Money(minor, currency)
}

// StaffDateTime writes a time for staff pages in the page's language, as
// the member pages write dates (27 November 2026, 27. November 2026,
// 27 novembre 2026), with the time of day in UTC.
func StaffDateTime(c echo.Context, t time.Time) string {
	t = t.UTC()
	return server.LangOf(c).Date(t) + ", " + t.Format("15:04")
}

// StaffDate writes a calendar date for staff pages in the page's language.
func StaffDate(c echo.Context, t time.Time) string { return server.LangOf(c).Date(t.UTC()) }

// StatusLabel names a stored state of a period, membership, order or
// payment attempt in the page's language; one it does not know as stored.
func StatusLabel(c echo.Context, status string) string {
	t := StaffOpsTextIn(c)
	switch status {
	case engine.PeriodOpen:
		return t.StatusOpen
	case engine.PeriodClosed:
		return t.StatusClosed
	case string(engine.MembershipPending):
		return t.StatusPendingPayment
	case string(engine.MembershipActive):
		return t.StatusActive
	case string(engine.MembershipCancelled), string(engine.PaymentCancelled):
		return t.StatusCancelled
	case string(engine.OrderUnpaid):
		return t.StatusUnpaid
	case string(engine.OrderPaid):
		return t.StatusPaid
	case string(engine.PaymentPending):
		return t.StatusPending
	case string(engine.PaymentSucceeded):
		return t.StatusSucceeded
	case string(engine.PaymentFailed):
		return t.StatusFailed
	}
	return status
}

// AgeGroupLabel names the overview's age group i (engine.AgeGroups) in
// the page's language: the first is "under" its bound, the last "from"
// the one before it, the others a range.
func AgeGroupLabel(c echo.Context, i int) string {
	groups := staff.AgeGroups
	switch {
	case i == 0:
		return fmt.Sprintf(StaffOpsTextIn(c).AgeUnder, groups[0].Below)
	case i == len(groups)-1:
		return fmt.Sprintf(StaffOpsTextIn(c).AgeFrom, groups[i-1].Below)
	case i > 0 && i < len(groups):
		return fmt.Sprintf("%d–%d", groups[i-1].Below, groups[i].Below-1)
	}
	return ""
}

// CurrentPeriod is the period running at now, else the newest.
func CurrentPeriod(periods []engine.MembershipPeriod, now time.Time) int64 {
	best := periods[0]
	for _, p := range periods {
		if !now.Before(p.StartDate) && now.Before(p.EndDate.AddDate(0, 0, 1)) {
			return p.ID
		}
		if p.StartDate.After(best.StartDate) {
			best = p
		}
	}
	return best.ID
}

// MemberTypeLabel names new, renewal and transfer.
func MemberTypeLabel(c echo.Context, t string) string {
	switch t {
	case engine.MemberNew:
		return StaffOpsTextIn(c).MemberNew
	case engine.MemberRenewal:
		return StaffOpsTextIn(c).MemberRenewal
	case engine.MemberTransfer:
		return StaffOpsTextIn(c).MemberTransfer
	}
	return t
}
