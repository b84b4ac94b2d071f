package staffview

import (
	"portal/views/yearreport"
)

// YearReportModel is the year-end report page.
type YearReportModel struct {
	Chrome
	Action         string // the period form's address
	Periods        []Option
	CSVURL, PDFURL string
	Report         yearreport.Doc
}
