package handlers

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
	"portal/engine/jobs"
	"portal/views"
)

// registrationsPath is the registrations list below StaffPrefix.
const registrationsPath = "/registrations"

// stateLabels are the registration states as the pages name them.
func stateLabel(c echo.Context, r engine.RegistrationState) string {
	switch r {
	case engine.RegSuspended:
		return staffTextIn(c).StateSuspended
	case engine.RegAwaitingPayment:
		return staffTextIn(c).StateAwaitingPayment
	case engine.RegPaid:
		return staffTextIn(c).StatePaid
	case engine.RegCancelled:
		return staffTextIn(c).StateCancelled
	}
	return staffTextIn(c).StateInProgress
}

// registrationQuery reads the list's filters from the query string;
// a filter that does not parse is an error the page names.
func registrationQuery(c echo.Context, orgID int64) (engine.RegistrationQuery, bool) {
	q := engine.RegistrationQuery{OrganisationID: orgID, Search: c.QueryParam("q"), State: engine.RegistrationState(c.QueryParam("state"))}
	ok := true
	num := func(name string) int64 {
		raw := strings.TrimSpace(c.QueryParam(name))
		if raw == "" {
			return 0
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 || n > 1<<31 {
			ok = false
			return 0
		}
		return n
	}
	q.PeriodID, q.MembershipTypeID, q.UnpaidDays, q.Page = num("period"), num("type"), int(num("unpaid")), int(num("page"))
	if q.State != "" && !slices.Contains(engine.RegistrationStates, q.State) {
		ok = false
	}
	if len(q.Search) > 200 {
		ok = false
	}
	return q, ok
}

// listURL is the list's address with q's filters and page.
func listURL(c echo.Context, path string, q engine.RegistrationQuery, page int) string {
	v := url.Values{}
	if q.Search != "" {
		v.Set("q", q.Search)
	}
	if q.PeriodID != 0 {
		v.Set("period", strconv.FormatInt(q.PeriodID, 10))
	}
	if q.State != "" {
		v.Set("state", string(q.State))
	}
	if q.MembershipTypeID != 0 {
		v.Set("type", strconv.FormatInt(q.MembershipTypeID, 10))
	}
	if q.UnpaidDays != 0 {
		v.Set("unpaid", strconv.Itoa(q.UnpaidDays))
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	u := tenantPath(c, StaffPrefix+path)
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// staffRegistrations answers GET /staff/registrations: search, filters
// (period, state, membership type, unpaid for more than N days) and pages
// of 50, newest first.
func (s *Server) staffRegistrations(c echo.Context) error {
	u := staffUserOf(c)
	q, ok := registrationQuery(c, u.OrganisationID)
	if !ok {
		return s.staffErrorPage(c, http.StatusBadRequest, staffTextIn(c).BadFilter)
	}
	ctx := c.Request().Context()
	page, err := s.engine.Registrations(ctx, q)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	periods, err := s.engine.Periods(ctx, u.OrganisationID)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	types, err := s.engine.MembershipTypes(ctx, u.OrganisationID)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	m := views.StaffRegistrationsModel{StaffChrome: s.staffChrome(c, staffTextIn(c).RegTitle), Action: tenantPath(c, StaffPrefix+registrationsPath),
		Search: q.Search, Total: page.Total,
		PageText: fmt.Sprintf(staffTextIn(c).RegPageText, page.Total, page.Page, page.PageCount)}
	if q.UnpaidDays > 0 {
		m.UnpaidDays = strconv.Itoa(q.UnpaidDays)
	}
	periodsByID := map[int64]string{}
	m.Periods = []views.StaffOption{{Value: "", Label: staffTextIn(c).RegAll}}
	for _, p := range periods {
		periodsByID[p.ID] = p.Name
		m.Periods = append(m.Periods, views.StaffOption{Value: strconv.FormatInt(p.ID, 10), Label: p.Name, Selected: p.ID == q.PeriodID})
	}
	m.States = []views.StaffOption{{Value: "", Label: staffTextIn(c).RegAll}}
	for _, st := range engine.RegistrationStates {
		m.States = append(m.States, views.StaffOption{Value: string(st), Label: stateLabel(c, st), Selected: st == q.State})
	}
	m.Types = []views.StaffOption{{Value: "", Label: staffTextIn(c).RegAll}}
	for _, t := range types {
		m.Types = append(m.Types, views.StaffOption{Value: strconv.FormatInt(t.ID, 10), Label: t.Name, Selected: t.ID == q.MembershipTypeID})
	}
	for _, r := range page.Rows {
		st := engine.RegistrationStateOf(r.Status)
		row := views.StaffRegistrationRow{URL: registrationURL(c, r.ID), ID: strconv.FormatInt(r.ID, 10), Household: strings.Join(r.Household, ", "),
			UserKey: r.UserKey, State: stateLabel(c, st), StateKey: string(st), Started: staffTime(r.StartTime), Updated: staffTime(r.UpdatedAt)}
		if r.Reference != nil {
			row.Reference = *r.Reference
		}
		if r.Total != nil && r.Currency != nil {
			row.Total = staffMoney(c, *r.Total, *r.Currency)
		}
		m.Rows = append(m.Rows, row)
	}
	if page.Page > 1 {
		m.PrevURL = listURL(c, registrationsPath, q, page.Page-1)
	}
	if page.Page < page.PageCount {
		m.NextURL = listURL(c, registrationsPath, q, page.Page+1)
	}
	if u.Role.AtLeast(engine.RoleTreasurer) {
		m.CSVURL = listURL(c, registrationsPath+".csv", q, 1)
	}
	return staffRender(c, http.StatusOK, views.StaffRegistrationsPage(m))
}

// registrationURL is the detail page of a registration.
func registrationURL(c echo.Context, id int64) string {
	return tenantPath(c, StaffPrefix+registrationsPath+"/"+strconv.FormatInt(id, 10))
}

// staffRegistrationsCSV answers GET /staff/registrations.csv (treasurer
// and up): every registration the filters select, streamed.
func (s *Server) staffRegistrationsCSV(c echo.Context) error {
	u := staffUserOf(c)
	q, ok := registrationQuery(c, u.OrganisationID)
	if !ok {
		return s.staffErrorPage(c, http.StatusBadRequest, staffTextIn(c).BadFilter)
	}
	if err := s.recordListExport(c, "registrations.csv"); err != nil { // the access log: staff_privacy.go
		return s.staffEngineError(c, err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="registrations-`+time.Now().UTC().Format("2006-01-02")+`.csv"`)
	w := csv.NewWriter(c.Response())
	started := false
	err := s.engine.RegistrationsCSV(c.Request().Context(), q, func(rec []string) error {
		if !started {
			c.Response().WriteHeader(http.StatusOK)
			started = true
		}
		for i, v := range rec {
			rec[i] = engine.CSVCell(v)
		}
		return w.Write(rec)
	})
	if err != nil {
		if !started {
			return s.staffEngineError(c, err)
		}
		s.logFor(c).Error("registrations export broke off", "err", err)
		return nil
	}
	w.Flush()
	return w.Error()
}

// staffRegistration answers GET /staff/registrations/:id.
func (s *Server) staffRegistration(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	ctx := c.Request().Context()
	d, err := s.engine.RegistrationDetail(ctx, u.OrganisationID, id)
	if err != nil {
		return s.staffEngineError(c, err)
	}
	audit, err := s.engine.AuditLog(ctx, engine.AuditQuery{OrganisationID: u.OrganisationID, InstanceID: id, Limit: 200})
	if err != nil {
		return s.staffEngineError(c, err)
	}
	st := engine.RegistrationStateOf(d.Instance.Status)
	m := views.StaffDetailModel{StaffChrome: s.staffChrome(c, fmt.Sprintf(staffTextIn(c).DetTitle, id)), ID: strconv.FormatInt(id, 10),
		UserKey: d.Instance.UserKey, State: stateLabel(c, st), StateKey: string(st), Period: d.Period.Name,
		Started: staffTime(d.Instance.StartTime), Updated: staffTime(d.Instance.UpdatedAt),
		Definition: fmt.Sprintf("%s v%d", d.Definition.Key, d.Definition.Version), Audit: s.staffAuditRows(c, audit),
		Today: time.Now().UTC().Format(time.DateOnly)}
	names := map[int64]string{}
	for _, p := range d.Household {
		name := strings.TrimSpace(p.FirstName + " " + p.LastName)
		names[p.ID] = name
		row := views.StaffPersonRow{Name: name, Born: p.DateOfBirth.Format(time.DateOnly), Email: p.Email, Selected: d.Selected[p.ID]}
		if staffUserOf(c).Role.AtLeast(engine.RoleRegistrar) {
			row.DataURL = staffPersonURL(c, p.ID)
		}
		m.Household = append(m.Household, row)
	}
	for _, step := range d.Steps {
		row := views.StaffStepRow{Question: step.Step.QuestionText}
		for _, a := range step.Answers {
			if a.PersonID != nil {
				row.Answers = append(row.Answers, names[*a.PersonID]+": "+a.Value)
			} else {
				row.Answers = append(row.Answers, a.Value)
			}
		}
		m.Steps = append(m.Steps, row)
	}
	if d.Archive != nil {
		m.Archive = fmt.Sprintf("%s (%s, %d)", d.Archive.Summary, staffTime(d.Archive.ArchivedAt), d.Archive.Answers)
	}
	for _, ms := range d.Memberships {
		m.Memberships = append(m.Memberships, views.StaffMembershipRow{Person: names[ms.PersonID], Type: ms.TypeTexts.In(langOf(c).Code, ms.TypeName), Kind: memberTypeLabel(c, ms.MemberType), Status: statusLabel(c, string(ms.Status))})
	}
	base := registrationURL(c, id)
	if o := d.Order; o != nil {
		om := &views.StaffOrderModel{Reference: o.PayReference, Status: statusLabel(c, string(o.Status)), Total: staffMoney(c, o.TotalMinor, o.Currency), Created: staffTime(o.CreatedAt)}
		// The RF reference members write on their transfer (the newest
		// bank-transfer attempt's: an order's attempts share it).
		for i := len(d.Payments) - 1; i >= 0; i-- {
			if p := d.Payments[i]; p.Provider == engine.BankTransferProvider && p.ProviderID != nil {
				if rf, err := banking.ParseReference(*p.ProviderID); err == nil {
					om.TransferReference = rf.String()
				}
				break
			}
		}
		if o.PaidAt != nil {
			om.Paid = staffTime(*o.PaidAt)
		}
		for _, l := range o.Lines {
			om.Lines = append(om.Lines, views.OrderLineModel{Description: l.Description, Amount: staffMoney(c, l.AmountMinor, l.Currency)})
		}
		m.Order = om
	}
	for _, p := range d.Payments {
		row := views.StaffPaymentRow{Reference: p.Reference, Provider: p.Provider, Status: statusLabel(c, string(p.Status)),
			Amount: staffMoney(c, p.AmountMinor, p.Currency), Created: staffTime(p.CreatedAt), Problem: p.Problem}
		switch p.RefundStatus {
		case engine.RefundDue:
			row.Refund = "refund due"
		case engine.RefundDone:
			// A refund recorded by hand has no provider id: "refunded ()".
			var refundID string
			if p.RefundID != nil {
				refundID = *p.RefundID
			}
			row.Refund = "refunded (" + refundID + ")"
		}
		for _, e := range p.Events {
			text := staffTime(e.CreatedAt) + " " + e.EventType + ": " + string(e.Outcome)
			if e.AmountMinor != nil && e.Currency != nil {
				text += " " + staffMoney(c, *e.AmountMinor, *e.Currency)
			}
			if e.Note != "" {
				text += " (" + e.Note + ")"
			}
			row.Events = append(row.Events, text)
		}
		if p.Status == engine.PaymentSucceeded && p.RefundStatus != engine.RefundDone && u.Role.AtLeast(engine.RoleTreasurer) {
			row.RefundURL = base + "/refund"
		}
		m.Payments = append(m.Payments, row)
	}
	for _, msg := range d.Messages {
		row := views.StaffMessageRow{Kind: string(msg.Kind), Recipient: msg.Recipient, Created: staffTime(msg.CreatedAt)}
		switch {
		case msg.SentAt != nil:
			row.Delivery = fmt.Sprintf(staffTextIn(c).DelSent, staffTime(*msg.SentAt))
		case msg.JobState == jobs.StateDead:
			row.Delivery, row.Error = staffTextIn(c).DelDead, msg.LastError
		case msg.JobState == jobs.StateFailed:
			row.Delivery, row.Error = fmt.Sprintf(staffTextIn(c).DelFailed, msg.Attempts), msg.LastError
		case msg.JobState == jobs.StateSucceeded:
			row.Delivery = staffTextIn(c).DelSkipped
		default:
			row.Delivery = staffTextIn(c).DelQueued
		}
		m.Messages = append(m.Messages, row)
	}
	if err := s.registrationPrivacy(c, d, &m); err != nil { // consents and the access log: staff_privacy.go
		return s.staffEngineError(c, err)
	}
	m.Actions = detailActions(u.Role, d, base)
	if m.Actions.Capture != "" {
		// The capture form asks for what is still owed: the total less
		// the parts that arrived (the same answer the pay page gives).
		due, err := s.engine.BankTransferDue(c.Request().Context(), d.Order.ID)
		if err != nil {
			return s.staffEngineError(c, err)
		}
		if due != nil {
			m.Actions.CaptureAmount = engine.FormatAmount(due.AmountMinor)
			if received := d.Order.TotalMinor - due.AmountMinor; received > 0 {
				m.Actions.CaptureOwed = fmt.Sprintf(staffTextIn(c).CapStillOwed, engine.FormatMoney(received, due.Currency), engine.FormatMoney(due.AmountMinor, due.Currency))
			}
		}
	}
	return staffRender(c, http.StatusOK, views.StaffDetailPage(m))
}

// detailActions are the actions a role may take on d now.
func detailActions(role engine.StaffRole, d *engine.RegistrationDetail, base string) views.StaffDetailActions {
	var a views.StaffDetailActions
	o := d.Order
	finished := d.Instance.Status == engine.StateCancelled || d.Instance.Status == engine.StateCompleted || d.Instance.Status == engine.StateFailed
	if role.AtLeast(engine.RoleRegistrar) {
		if o != nil && o.Status == engine.OrderPaid {
			a.ResendConfirmation = base + "/resend-confirmation"
		}
		if o != nil && o.Status == engine.OrderUnpaid {
			a.ResendPaymentLink = base + "/resend-payment-link"
		}
		if !finished {
			a.Reset = base + "/reset"
		}
		if d.Instance.Status != engine.StateCancelled {
			a.Cancel = base + "/cancel"
		}
	}
	if role.AtLeast(engine.RoleTreasurer) && o != nil && o.Status == engine.OrderUnpaid {
		for _, p := range d.Payments {
			if p.Provider == engine.BankTransferProvider {
				a.Capture, a.CaptureCurrency = base+"/capture", o.Currency
				break
			}
		}
	}
	return a
}

// staffDone goes back to the registration with a result message (PRG).
func staffDone(c echo.Context, id int64, done string) error {
	return c.Redirect(http.StatusSeeOther, registrationURL(c, id)+"?done="+done)
}

// staffResendConfirmation answers POST /staff/registrations/:id/resend-confirmation.
func (s *Server) staffResendConfirmation(c echo.Context) error {
	return s.staffAction(c, "resent-confirmation", func(u *staffUser, id int64) error {
		return s.engine.ResendConfirmation(c.Request().Context(), u.actor(), u.OrganisationID, id)
	})
}

// staffResendPaymentLink answers POST /staff/registrations/:id/resend-payment-link.
func (s *Server) staffResendPaymentLink(c echo.Context) error {
	return s.staffAction(c, "resent-link", func(u *staffUser, id int64) error {
		return s.engine.ResendPaymentLink(c.Request().Context(), u.actor(), u.OrganisationID, id)
	})
}

// staffResetRegistration answers POST /staff/registrations/:id/reset, after a confirmation.
func (s *Server) staffResetRegistration(c echo.Context) error {
	return s.staffConfirmedAction(c, staffTextIn(c).ConfirmReset, staffTextIn(c).ConfirmResetDetail, "reset", func(u *staffUser, id int64) error {
		return s.engine.StaffReset(c.Request().Context(), u.actor(), u.OrganisationID, id)
	})
}

// staffCancelRegistration answers POST /staff/registrations/:id/cancel, after a confirmation.
func (s *Server) staffCancelRegistration(c echo.Context) error {
	return s.staffConfirmedAction(c, staffTextIn(c).ConfirmCancel, staffTextIn(c).ConfirmCancelDetail, "cancelled", func(u *staffUser, id int64) error {
		return s.engine.CancelRegistration(c.Request().Context(), u.actor(), u.OrganisationID, id)
	})
}

// staffRefund answers POST /staff/registrations/:id/refund (payment=REF), after a confirmation.
func (s *Server) staffRefund(c echo.Context) error {
	ref := c.FormValue("payment")
	return s.staffConfirmedAction(c, fmt.Sprintf(staffTextIn(c).ConfirmRefund, ref), staffTextIn(c).ConfirmRefundDetail, "refunded", func(u *staffUser, id int64) error {
		return s.engine.RefundPayment(c.Request().Context(), u.actor(), u.OrganisationID, id, ref, "")
	})
}

// staffCapture answers POST /staff/registrations/:id/capture: amount,
// booked (a date, not in the future) and note.
func (s *Server) staffCapture(c echo.Context) error {
	u := staffUserOf(c)
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	amount, err := engine.ParseAmount(strings.TrimSpace(c.FormValue("amount")))
	if err != nil || amount <= 0 {
		return s.staffErrorPage(c, http.StatusUnprocessableEntity, staffTextIn(c).BadAmount)
	}
	booked, err := time.Parse(time.DateOnly, strings.TrimSpace(c.FormValue("booked")))
	if err != nil || booked.After(time.Now().UTC()) {
		return s.staffErrorPage(c, http.StatusUnprocessableEntity, staffTextIn(c).BadDate)
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if len(note) > 200 {
		note = note[:200]
	}
	res, err := s.engine.StaffCapture(c.Request().Context(), u.actor(), u.OrganisationID, id, engine.Capture{AmountMinor: amount, BookedOn: booked, Note: note})
	if err != nil {
		return s.staffEngineError(c, err)
	}
	switch {
	case res.SecondCredit && !res.Replayed:
		return staffDone(c, id, "captured-second")
	case res.Problem == "partial":
		// Part arrived (now, or this form again finds it so): the page
		// shows what is still owed beside the capture form.
		return staffDone(c, id, "captured-partial")
	case res.Problem != "":
		return staffDone(c, id, "captured-problem")
	}
	return staffDone(c, id, "captured") // the form sent twice: captured once
}

// staffAction runs a registration action and goes back to it.
func (s *Server) staffAction(c echo.Context, done string, act func(*staffUser, int64) error) error {
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	if err := act(staffUserOf(c), id); err != nil {
		return s.staffEngineError(c, err)
	}
	return staffDone(c, id, done)
}

// staffConfirmedAction asks first (staffConfirmed), then runs the action.
func (s *Server) staffConfirmedAction(c echo.Context, question, detail, done string, act func(*staffUser, int64) error) error {
	id, ok := pathID(c, "id")
	if !ok {
		return s.staffErrorPage(c, http.StatusNotFound, staffTextIn(c).NotFound)
	}
	if ok, err := s.staffConfirmed(c, question, detail, registrationURL(c, id)); !ok {
		return err
	}
	return s.staffAction(c, done, act)
}
