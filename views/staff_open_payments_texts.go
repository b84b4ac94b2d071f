package views

import (
	"context"

	"portal/views/lang"
)

// StaffOpenPaymentTexts are the texts of the open payments page: who
// still owes money, and the payment link sent again to many at once.
type StaffOpenPaymentTexts struct {
	NavOpenPayments, Title, Intro, Period, All, MinDays, MinReminders, Sort, SortOldest, SortNewest, SortOwed,
	SortReminders, Apply, Export, Empty, Count, Select, Registration, Household, Owed, OwedOf, RF,
	Days, Reminders, LastMessage, None, Resend, ResendHint, NoneSelected, Sent string
}

// staffOpenPaymentTexts are the open payments page's texts in every language: the group staff_open_payments of
// views/lang/locales/staff.<code>.json.
var staffOpenPaymentTexts = lang.LoadTexts[StaffOpenPaymentTexts]("staff_open_payments")

// StaffOpenPaymentText holds them in English.
var StaffOpenPaymentText = staffOpenPaymentTexts.For("en")

// StaffOpenPaymentTextIn is the open payments page's texts in the language of ctx.
func StaffOpenPaymentTextIn(ctx context.Context) *StaffOpenPaymentTexts {
	return staffOpenPaymentTexts.In(ctx)
}
