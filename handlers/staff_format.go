package handlers

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/staff"
)

// The staff pages write money, states and age groups as the member pages
// do: in the page's language, with its separators (804,50 EUR in German),
// never the stored spelling ("Pending Payment", "EUR 804.50").

// staffMoney is an amount in the page's language (lang.Money, as the
// member pages write it).
func staffMoney(c echo.Context, minor int64, currency string) string {
	return langOf(c).Money(minor, currency)
}

// staffDateTime writes a time for staff pages in the page's language, as
// the member pages write dates (27 November 2026, 27. November 2026,
// 27 novembre 2026), with the time of day in UTC.
func staffDateTime(c echo.Context, t time.Time) string {
	t = t.UTC()
	return langOf(c).Date(t) + ", " + t.Format("15:04")
}

// staffDate writes a calendar date for staff pages in the page's language.
func staffDate(c echo.Context, t time.Time) string { return langOf(c).Date(t.UTC()) }

// statusLabel names a stored state of a period, membership, order or
// payment attempt in the page's language; one it does not know as stored.
func statusLabel(c echo.Context, status string) string {
	t := staffOpsTextIn(c)
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

// ageGroupLabel names the overview's age group i (engine.AgeGroups) in
// the page's language: the first is "under" its bound, the last "from"
// the one before it, the others a range.
func ageGroupLabel(c echo.Context, i int) string {
	groups := staff.AgeGroups
	switch {
	case i == 0:
		return fmt.Sprintf(staffOpsTextIn(c).AgeUnder, groups[0].Below)
	case i == len(groups)-1:
		return fmt.Sprintf(staffOpsTextIn(c).AgeFrom, groups[i-1].Below)
	case i > 0 && i < len(groups):
		return fmt.Sprintf("%d–%d", groups[i-1].Below, groups[i].Below-1)
	}
	return ""
}
