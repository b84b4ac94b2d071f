package views

// StaffOpenPaymentsModel is the open payments list.
type StaffOpenPaymentsModel struct {
	StaffChrome
	Action                string // the filter form's address
	MinDays, MinReminders string
	Periods, Sorts        []StaffOption
	Rows                  []StaffOpenPaymentRow
	CountText             string
	CSVURL                string // "" when the role may not
	ResendURL             string // the bulk action's address
}

// StaffOpenPaymentRow is one unpaid order in the list.
type StaffOpenPaymentRow struct {
	ID, URL, Household, UserKey, RF, Owed, Total, Days, Reminders, LastMessage, LastMessageAt string
	// PartPaid is true when a part arrived (Total is then shown beside Owed).
	PartPaid bool
}
