package views

import "portal/views/yearreport"

// StaffYearReportModel is the year-end report page.
type StaffYearReportModel struct {
	StaffChrome
	Action         string // the period form's address
	Periods        []StaffOption
	CSVURL, PDFURL string
	Report         yearreport.Doc
}
