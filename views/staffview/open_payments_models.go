package staffview

// OpenPaymentsModel is the open payments list.
type OpenPaymentsModel struct {
	Chrome
	Action                string // the filter form's address
	MinDays, MinReminders string
	Periods, Sorts        []Option
	Rows                  []OpenPaymentRow
	CountText             string
	// PrevURL and NextURL are the neighbouring pages, "" at either end.
	PrevURL, NextURL string
	CSVURL           string // "" when the role may not
	ResendURL        string // the bulk action's address
	// Today is the capture forms' default booking date (YYYY-MM-DD);
	// CaptureBack their back= field, which brings the result here.
	Today, CaptureBack string
}

// OpenPaymentRow is one unpaid order in the list.
type OpenPaymentRow struct {
	ID, URL, Household, UserKey, RF, Owed, Total, Days, Reminders, LastMessage, LastMessageAt string
	// PartPaid is true when a part arrived (Total is then shown beside Owed).
	PartPaid bool
	// CaptureURL is where a bank transfer of this row is recorded, ""
	// when it is not paid by transfer; CaptureAmount pre-fills it with
	// what is owed (a plain amount, "184.50").
	CaptureURL, CaptureAmount string
}
