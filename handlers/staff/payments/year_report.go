package payments

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/report"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
	"portal/views/yearreport"
)

// yearReportPeriod is the period ?period= names, by default the one
// running today (else the newest); ok is false when it does not parse.
// No periods at all gives 0.
func (s *Server) yearReportPeriod(c echo.Context, orgID int64) (periods []engine.MembershipPeriod, id int64, ok bool, err error) {
	periods, err = organisation.Of(s.engine).Periods(c.Request().Context(), orgID)
	if err != nil || len(periods) == 0 {
		return periods, 0, true, err
	}
	id = staffpage.CurrentPeriod(periods, clock.Now())
	if raw := c.QueryParam("period"); raw != "" {
		if id, err = strconv.ParseInt(raw, 10, 64); err != nil || id <= 0 {
			return periods, 0, false, nil
		}
	}
	return periods, id, true, nil
}

// yearReportDoc builds the printed report of r in the page's language:
// the one Doc the page, the CSV and the PDF are written from.
func yearReportDoc(c echo.Context, club string, r *report.YearReport, now time.Time) yearreport.Doc {
	t := staffpage.StaffYearReportTextIn(c)
	l := server.LangOf(c)
	code := l.Code
	money := func(minor int64) yearreport.Cell {
		return yearreport.Cell{Text: l.Money(minor, r.Currency), Value: engine.FormatAmount(minor), Money: true}
	}
	count := func(n int) yearreport.Cell {
		return yearreport.Cell{Text: l.Number(float64(n), 0), Value: strconv.Itoa(n)}
	}
	none := yearreport.Cell{Text: "–"}
	d := yearreport.Doc{Club: club, Title: t.Title, Period: r.Period.NameTexts.In(code, r.Period.Name),
		Dates:     fmt.Sprintf(t.Dates, l.Date(r.Period.StartDate), l.Date(r.Period.EndDate)),
		Generated: fmt.Sprintf(t.Generated, l.Date(now)+" "+now.UTC().Format("15:04")+" UTC"), Created: now, Currency: r.Currency,
		CSVHead: [5]string{t.CSVSection, t.CSVItem, t.CSVMeasure, t.CSVValue, t.CSVCurrency},
		Notes:   []string{t.NotePeriod, t.NoteIncome, t.NotePartial, t.NoteOutstanding, t.NoteMembers}}

	paymentCount := 0
	for _, m := range r.ByMethod {
		paymentCount += m.Payments
	}
	d.Tables = append(d.Tables, yearreport.Table{ID: "summary", Title: t.Summary, Columns: []string{t.Item, t.Count, t.Amount},
		Rows: []yearreport.Row{
			{Label: t.PaidOrders, Cells: []yearreport.Cell{count(r.PaidOrders), money(r.PaidMinor)}},
			{Label: t.PartPayments, Cells: []yearreport.Cell{count(r.PartialOrders), money(r.PartialMinor)}},
			{Label: t.ReceivedAll, Cells: []yearreport.Cell{count(paymentCount), money(r.ReceivedMinor)}},
			// Amounts taken off the money received, as amounts: the label
			// says they are taken off, not a minus sign before a negative.
			{Label: t.LessRefunded, Cells: []yearreport.Cell{none, money(r.RefundedMinor)}},
			{Label: t.LessOwedBack, Cells: []yearreport.Cell{none, money(r.OwedBackMinor)}},
			{Label: t.Income, Cells: []yearreport.Cell{none, money(r.IncomeMinor)}, Strong: true},
			{Label: t.Outstanding, Cells: []yearreport.Cell{count(r.OpenOrders), money(r.OutstandingMinor)}},
		}})

	amounts := func(id, title, first string, rows []report.Amount) yearreport.Table {
		tb := yearreport.Table{ID: id, Title: title, Columns: []string{first, t.Lines, t.Amount}}
		lines := 0
		for _, a := range rows {
			label := a.Texts.In(code, a.Name)
			switch {
			case a.Key == "-":
				label = t.Unitemised
			case a.Key == "" || label == "":
				label = t.WholeOrder
			}
			tb.Rows = append(tb.Rows, yearreport.Row{Label: label, Cells: []yearreport.Cell{count(a.Lines), money(a.AmountMinor)}})
			lines += a.Lines
		}
		tb.Total = &yearreport.Row{Label: t.Total, Cells: []yearreport.Cell{count(lines), money(r.PaidMinor)}}
		return tb
	}
	d.Tables = append(d.Tables, amounts("by-type", t.ByType, t.Item, r.ByType), amounts("by-rule", t.ByRule, t.Item, r.ByRule))

	methods := yearreport.Table{ID: "by-method", Title: t.ByMethod, Columns: []string{t.Item, t.Payments, t.Received, t.Refunded, t.OwedBack, t.Net}, Wide: true}
	for _, m := range r.ByMethod {
		methods.Rows = append(methods.Rows, yearreport.Row{Label: paymentMethodLabel(t, m.Provider),
			Cells: []yearreport.Cell{count(m.Payments), money(m.ReceivedMinor), money(m.RefundedMinor), money(m.OwedBackMinor), money(m.NetMinor())}})
	}
	methods.Total = &yearreport.Row{Label: t.Total, Cells: []yearreport.Cell{count(paymentCount), money(r.ReceivedMinor), money(r.RefundedMinor),
		money(r.OwedBackMinor), money(r.IncomeMinor)}}
	d.Tables = append(d.Tables, methods)

	members := func(id, title string, rows []report.Members, label func(i int, m report.Members) string) yearreport.Table {
		tb := yearreport.Table{ID: id, Title: title, Columns: []string{t.Item, t.Active, t.Pending, t.Members}}
		for i, m := range rows {
			tb.Rows = append(tb.Rows, yearreport.Row{Label: label(i, m), Cells: []yearreport.Cell{count(m.Active), count(m.Pending), count(m.Active + m.Pending)}})
		}
		tb.Total = &yearreport.Row{Label: t.Total, Cells: []yearreport.Cell{count(r.ActiveMembers), count(r.PendingMembers), count(r.ActiveMembers + r.PendingMembers)}}
		return tb
	}
	d.Tables = append(d.Tables,
		members("members-by-type", t.MembersByType, r.MembersByType, func(_ int, m report.Members) string { return m.Texts.In(code, m.Name) }),
		members("members-by-age", t.MembersByAge, r.MembersByAge, func(i int, _ report.Members) string { return staffpage.AgeGroupLabel(c, i) }))
	return d
}

// paymentMethodLabel names a payment provider in the report's language;
// one it does not know as stored.
func paymentMethodLabel(t *staffview.YearReportTexts, provider string) string {
	switch provider {
	case payment.BankTransferProvider:
		return t.MethodBankTransfer
	case payment.StripeProvider:
		return t.MethodStripe
	case payment.TestGatewayProvider:
		return t.MethodTest
	}
	return provider
}

// yearReport loads the report of the period the request names, built as
// a Doc; a response has been written when it returns ok false.
func (s *Server) yearReport(c echo.Context) (doc yearreport.Doc, m staffview.YearReportModel, ok bool, err error) {
	u := staffpage.StaffUserOf(c)
	t := staffpage.StaffYearReportTextIn(c)
	periods, periodID, parsed, err := s.yearReportPeriod(c, u.OrganisationID)
	if err != nil {
		return doc, m, false, s.StaffEngineError(c, err)
	}
	if !parsed {
		return doc, m, false, s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	if len(periods) == 0 {
		mm := staffview.MessageModel{Chrome: s.StaffChrome(c, t.Title), Message: staffpage.StaffTextIn(c).OvNoPeriod, Kind: "info"}
		return doc, m, false, staffpage.StaffRender(c, http.StatusOK, staffview.Message(mm))
	}
	ctx := c.Request().Context()
	r, err := report.Of(s.engine).YearReport(ctx, u.OrganisationID, periodID)
	if err != nil {
		return doc, m, false, s.StaffEngineError(c, err)
	}
	org, err := s.engine.Organisation(ctx, u.OrganisationID)
	if err != nil {
		return doc, m, false, s.StaffEngineError(c, err)
	}
	doc = yearReportDoc(c, org.Name, r, clock.Now().UTC())
	query := "?period=" + strconv.FormatInt(periodID, 10)
	m = staffview.YearReportModel{Action: staffpage.RequestOf(c).StaffPath(server.YearReportPath), Report: doc,
		CSVURL: staffpage.RequestOf(c).StaffPath(server.YearReportPath+".csv") + query, PDFURL: staffpage.RequestOf(c).StaffPath(server.YearReportPath+".pdf") + query}
	for _, p := range periods {
		m.Periods = append(m.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.NameTexts.In(server.LangOf(c).Code, p.Name), Selected: p.ID == periodID})
	}
	return doc, m, true, nil
}

// StaffYearReport answers GET /staff/year-report?period=ID (treasurer and
// up): the period's money and members for the general meeting.
func (s *Server) StaffYearReport(c echo.Context) error {
	_, m, ok, err := s.yearReport(c)
	if !ok {
		return err
	}
	m.Chrome = s.StaffChrome(c, staffpage.StaffYearReportTextIn(c).Title)
	return staffpage.StaffRender(c, http.StatusOK, staffview.YearReport(m))
}

// StaffYearReportCSV answers GET /staff/year-report.csv?period=ID
// (treasurer and up): the report a figure a line, formulas neutralised.
func (s *Server) StaffYearReportCSV(c echo.Context) error {
	doc, _, ok, err := s.yearReport(c)
	if !ok {
		return err
	}
	var buf bytes.Buffer
	if err := yearreport.WriteCSV(&buf, doc, report.CSVCell); err != nil {
		return s.StaffEngineError(c, err)
	}
	return yearReportFile(c, "text/csv; charset=utf-8", "csv", buf.Bytes())
}

// StaffYearReportPDF answers GET /staff/year-report.pdf?period=ID
// (treasurer and up): the report to print.
func (s *Server) StaffYearReportPDF(c echo.Context) error {
	doc, _, ok, err := s.yearReport(c)
	if !ok {
		return err
	}
	pdf, err := yearreport.RenderPDF(doc)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	return yearReportFile(c, "application/pdf", "pdf", pdf)
}

// yearReportFile sends a download of the report, named after today.
func yearReportFile(c echo.Context, contentType, ext string, body []byte) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, `attachment; filename="year-report-`+clock.Now().UTC().Format("2006-01-02")+"."+ext+`"`)
	return c.Blob(http.StatusOK, contentType, body)
}
