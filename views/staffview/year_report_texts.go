package staffview

import (
	"context"

	"portal/views/lang"
)

// YearReportTexts are the texts of the year-end report: the staff
// page, its CSV and its PDF.
type YearReportTexts struct {
	NavYearReport, Title, Intro, Period, Show, CSV, PDF, Generated, Dates string
	// Sections and their columns.
	Summary, ByType, ByRule, ByMethod, MembersByType, MembersByAge, Item, Count, Amount, Lines, Payments,
	Received, Refunded, OwedBack, Net, Active, Pending, Members, Total string
	// Summary rows.
	PaidOrders, PartPayments, ReceivedAll, LessRefunded, LessOwedBack, Income, Outstanding string
	// Labels of rows that are not a type or rule of the club.
	WholeOrder, Unitemised, MethodBankTransfer, MethodStripe, MethodTest string
	// CSV headings.
	CSVSection, CSVItem, CSVMeasure, CSVValue, CSVCurrency string
	// Notes say what the figures mean.
	NotePeriod, NoteIncome, NotePartial, NoteOutstanding, NoteMembers string
}

// staffYearReportTexts are the year report's texts in every language: the group staff_year_report of
// views/lang/locales/staff.<code>.json.
var staffYearReportTexts = lang.LoadTexts[YearReportTexts]("staff_year_report")

// YearReportText holds them in English.
var YearReportText = staffYearReportTexts.For("en")

// YearReportTextIn is the year report's texts in the language of ctx.
func YearReportTextIn(ctx context.Context) *YearReportTexts {
	return staffYearReportTexts.In(ctx)
}
