package payments

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/organisation"
	"portal/engine/payment"
	"portal/engine/privacy"
	"portal/engine/report"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// maxBulkSelection bounds the registrations one bulk action names.
const maxBulkSelection = 1000

// openPaymentsPageSize is how many unpaid orders a page of the list
// shows; the CSV has them all. A federation's big club has 1,000, and
// their rows with capture forms took some 100 ms to render (issue 42).
const openPaymentsPageSize = 100

// openPaymentQuery reads the list's filters and order from the query
// string; one that does not parse is an error the page names.
func openPaymentQuery(c echo.Context, orgID int64) (staff.OpenPaymentQuery, bool) {
	q := staff.OpenPaymentQuery{OrganisationID: orgID, Sort: staff.OpenPaymentSort(c.QueryParam("sort"))}
	ok := true
	num := func(name string, limit int64) int64 {
		raw := strings.TrimSpace(c.QueryParam(name))
		if raw == "" {
			return 0
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 || n > limit {
			ok = false
			return 0
		}
		return n
	}
	q.PeriodID, q.MinDays, q.MinReminders = num("period", 1<<53), int(num("unpaid", 36500)), int(num("reminders", 1000))
	if q.Sort != "" && !slices.Contains(staff.OpenPaymentSorts, q.Sort) {
		ok = false
	}
	return q, ok
}

// openPaymentsPage reads the page= of the list's address (1 when absent);
// one that does not parse is an error the page names.
func openPaymentsPage(c echo.Context) (int, bool) {
	raw := strings.TrimSpace(c.QueryParam("page"))
	if raw == "" {
		return 1, true
	}
	n, err := strconv.Atoi(raw)
	return n, err == nil && n >= 1 && n <= 1<<20
}

// OpenPaymentsURL is the list's (or its CSV's) address with q's filters.
func OpenPaymentsURL(c echo.Context, path string, q staff.OpenPaymentQuery) string {
	return openPaymentsPageURL(c, path, q, 1)
}

// openPaymentsPageURL is page page of the list with q's filters.
func openPaymentsPageURL(c echo.Context, path string, q staff.OpenPaymentQuery, page int) string {
	v := url.Values{}
	if q.PeriodID != 0 {
		v.Set("period", strconv.FormatInt(q.PeriodID, 10))
	}
	if q.MinDays != 0 {
		v.Set("unpaid", strconv.Itoa(q.MinDays))
	}
	if q.MinReminders != 0 {
		v.Set("reminders", strconv.Itoa(q.MinReminders))
	}
	if q.Sort != "" {
		v.Set("sort", string(q.Sort))
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	u := staffpage.RequestOf(c).StaffPath(path)
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

func openPaymentSortLabel(c echo.Context, s staff.OpenPaymentSort) string {
	t := staffpage.StaffOpenPaymentTextIn(c)
	switch s {
	case staff.SortNewest:
		return t.SortNewest
	case staff.SortOwed:
		return t.SortOwed
	case staff.SortReminders:
		return t.SortReminders
	}
	return t.SortOldest
}

// StaffOpenPayments answers GET /staff/open-payments (treasurer and up):
// every unpaid order with what is still owed, filtered and sorted, a
// page (page=) at a time.
func (s *Server) StaffOpenPayments(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	t := staffpage.StaffOpenPaymentTextIn(c)
	q, ok := openPaymentQuery(c, u.OrganisationID)
	pageNo, pageOK := openPaymentsPage(c)
	if !ok || !pageOK {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	ctx := c.Request().Context()
	page, err := staff.Of(s.engine).OpenPaymentsPage(ctx, q, pageNo, openPaymentsPageSize)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	rows := page.Rows
	periods, err := organisation.Of(s.engine).Periods(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.OpenPaymentsModel{Chrome: s.StaffChrome(c, t.Title), Action: staffpage.RequestOf(c).StaffPath(server.OpenPaymentsPath),
		CountText: fmt.Sprintf(t.Count, page.Total), CSVURL: OpenPaymentsURL(c, server.OpenPaymentsPath+".csv", q),
		ResendURL: staffpage.RequestOf(c).StaffPath(server.OpenPaymentsPath + "/resend-payment-link")}
	if page.PageCount > 1 {
		m.CountText = fmt.Sprintf(t.PageText, page.Total, page.Page, page.PageCount)
	}
	if page.Page > 1 {
		m.PrevURL = openPaymentsPageURL(c, server.OpenPaymentsPath, q, page.Page-1)
	}
	if page.Page < page.PageCount {
		m.NextURL = openPaymentsPageURL(c, server.OpenPaymentsPath, q, page.Page+1)
	}
	if q.MinDays > 0 {
		m.MinDays = strconv.Itoa(q.MinDays)
	}
	if q.MinReminders > 0 {
		m.MinReminders = strconv.Itoa(q.MinReminders)
	}
	m.Periods = []staffview.Option{{Value: "", Label: t.All}}
	for _, p := range periods {
		m.Periods = append(m.Periods, staffview.Option{Value: strconv.FormatInt(p.ID, 10), Label: p.Name, Selected: p.ID == q.PeriodID})
	}
	for _, so := range staff.OpenPaymentSorts {
		m.Sorts = append(m.Sorts, staffview.Option{Value: string(so), Label: openPaymentSortLabel(c, so),
			Selected: so == q.Sort || (q.Sort == "" && so == staff.SortOldest)})
	}
	for _, r := range rows {
		row := staffview.OpenPaymentRow{ID: strconv.FormatInt(r.RegistrationID, 10), URL: registrations.RegistrationURL(c, r.RegistrationID),
			Household: strings.Join(r.Household, ", "), UserKey: r.UserKey, RF: r.RF(),
			Owed: staffpage.StaffMoney(c, r.OwedMinor, r.Currency), Total: staffpage.StaffMoney(c, r.TotalMinor, r.Currency), PartPaid: r.ReceivedMinor > 0,
			Days: strconv.Itoa(r.Days), Reminders: strconv.Itoa(r.Reminders), LastMessage: t.None}
		if r.RF() != "" {
			// A bank transfer: recorded from the list, pre-filled with what is owed.
			row.CaptureURL, row.CaptureAmount = registrations.RegistrationURL(c, r.RegistrationID)+"/capture", engine.FormatAmount(r.OwedMinor)
		}
		if r.LastMessageKind != "" {
			row.LastMessage, row.LastMessageAt = registrations.MessageLabel(c, r.LastMessageKind), staffpage.StaffDateTime(c, r.LastMessageAt)
		}
		m.Rows = append(m.Rows, row)
	}
	m.Today, m.CaptureBack = clock.Now().UTC().Format(time.DateOnly), registrations.CaptureBackToOpenPayments
	if words, err := s.openPaymentCaptureWords(c, u.OrganisationID); err != nil {
		return s.StaffEngineError(c, err)
	} else if words != "" {
		m.Flash = words
	}
	// The bulk action's outcome comes back as two counts (PRG); the
	// message is ours, only the numbers come from the address.
	sent, errSent := strconv.Atoi(c.QueryParam("sent"))
	skipped, errSkipped := strconv.Atoi(c.QueryParam("skipped"))
	if errSent == nil && errSkipped == nil && sent >= 0 && skipped >= 0 {
		m.Flash = fmt.Sprintf(t.Sent, sent, skipped)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.OpenPayments(m))
}

// StaffOpenPaymentsCSV answers GET /staff/open-payments.csv (treasurer
// and up): the list's rows, formulas neutralised.
func (s *Server) StaffOpenPaymentsCSV(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	q, ok := openPaymentQuery(c, u.OrganisationID)
	if !ok {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	// Gathered before the first byte, so that a failure is still an
	// error page; the list is one query.
	var recs [][]string
	err := staff.Of(s.engine).OpenPaymentsCSV(c.Request().Context(), q, func(rec []string) error {
		for i, v := range rec {
			rec[i] = report.CSVCell(v)
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	// Every member's name and debt: one access log entry before the
	// first byte (docs/DATA-PROTECTION.md, "Access log").
	if err := privacy.Of(s.engine).RecordAccess(c.Request().Context(), u.Actor(), privacy.BulkRead(u.OrganisationID, "open-payments.csv", c.QueryString())); err != nil {
		return s.StaffEngineError(c, err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="open-payments-`+clock.Now().UTC().Format("2006-01-02")+`.csv"`)
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	if err := w.WriteAll(recs); err != nil {
		s.LogFor(c).Error("open payments export broke off", "err", err)
	}
	return nil
}

// StaffResendPaymentLinks answers POST /staff/open-payments/resend-payment-link
// (treasurer and up; id= per selected registration): the payment link
// sent again to each, as from its registration page, then back to the list
// with how many were sent and skipped.
func (s *Server) StaffResendPaymentLinks(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	form, err := c.FormParams()
	if err != nil {
		return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
	}
	raw := form["id"]
	if len(raw) == 0 {
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffOpenPaymentTextIn(c).NoneSelected)
	}
	if len(raw) > maxBulkSelection {
		return s.StaffErrorPage(c, http.StatusRequestEntityTooLarge, staffpage.StaffTextIn(c).BadFilter)
	}
	ids := make([]int64, 0, len(raw))
	for _, v := range raw {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id <= 0 {
			return s.StaffErrorPage(c, http.StatusBadRequest, staffpage.StaffTextIn(c).BadFilter)
		}
		ids = append(ids, id)
	}
	sent, skipped, err := staff.Of(s.engine).ResendPaymentLinks(c.Request().Context(), u.Actor(), u.OrganisationID, ids)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	back := staffpage.RequestOf(c).StaffPath(server.OpenPaymentsPath) + "?" + url.Values{"sent": {strconv.Itoa(sent)}, "skipped": {strconv.Itoa(skipped)}}.Encode()
	return c.Redirect(http.StatusSeeOther, back)
}

// openPaymentCaptureWords states what a capture sent from the list left
// (?done=captured…&registration=ID), in words, from the state the
// registration is in now; "" when the address names none.
func (s *Server) openPaymentCaptureWords(c echo.Context, orgID int64) (string, error) {
	done := c.QueryParam("done")
	id, err := strconv.ParseInt(c.QueryParam("registration"), 10, 64)
	if !strings.HasPrefix(done, "captured") || err != nil || id <= 0 {
		return "", nil
	}
	ctx := c.Request().Context()
	d, err := staff.Of(s.engine).RegistrationDetail(ctx, orgID, id)
	if err != nil || d.Order == nil {
		return "", err
	}
	var due *banking.Transfer
	if d.Order.Status == engine.OrderUnpaid {
		if due, err = payment.Of(s.engine).BankTransferDue(ctx, d.Order.ID); err != nil {
			return "", err
		}
	}
	words := registrations.CaptureWords(c, done, d, due)
	if words == "" {
		flash, ok := staffpage.StaffFlashes[done]
		if !ok {
			return "", nil
		}
		words = flash(c)
	}
	return fmt.Sprintf(staffpage.StaffTextIn(c).DetTitle, id) + ": " + words, nil
}
