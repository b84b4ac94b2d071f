package staffview

import (
	"context"

	"portal/views/lang"
)

// OpenPaymentTexts are the texts of the open payments page: who
// still owes money, and the payment link sent again to many at once.
type OpenPaymentTexts struct {
	NavOpenPayments, Title, Intro, Period, All, MinDays, MinReminders, Sort, SortOldest, SortNewest, SortOwed,
	SortReminders, Apply, Export, Empty, Count, PageText, Select, Registration, Household, Owed, OwedOf, RF,
	Days, Reminders, LastMessage, None, Resend, ResendHint, NoneSelected, Sent string
}

// staffOpenPaymentTexts are the open payments page's texts in every language: the group staff_open_payments of
// views/lang/locales/staff.<code>.json.
var staffOpenPaymentTexts = lang.LoadTexts[OpenPaymentTexts]("staff_open_payments")

// OpenPaymentText holds them in English.
var OpenPaymentText = staffOpenPaymentTexts.For("en")

// OpenPaymentTextIn is the open payments page's texts in the language of ctx.
func OpenPaymentTextIn(ctx context.Context) *OpenPaymentTexts {
	return staffOpenPaymentTexts.In(ctx)
}
