package registrations

import (
	"cmp"
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
	"portal/engine/definition"
	"portal/engine/directdebit"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/staffpage"
	"portal/views"
	"portal/views/staffview"
)

// One registration read as a record: who it registered, what they
// answered as they saw it, what happened to the payment, in the page's
// language; and what staff may do to it.

func staffRegistrationTextIn(c echo.Context) *staffview.RegistrationTexts {
	return staffview.RegistrationTextIn(c.Request().Context())
}

// staffWhen is a moment as the staff pages write it: the date in the
// page's language and the time (UTC).
func staffWhen(c echo.Context, t time.Time) string {
	t = t.UTC()
	return server.LangOf(c).Date(t) + " " + t.Format("15:04")
}

// StaffRegistration answers GET /staff/registrations/:id.
func (s *Server) StaffRegistration(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	ctx := c.Request().Context()
	d, err := staff.Of(s.engine).RegistrationDetail(ctx, u.OrganisationID, id)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	audit, err := s.engine.AuditLog(ctx, engine.AuditQuery{OrganisationID: u.OrganisationID, InstanceID: id, Limit: 200})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	st := staff.RegistrationStateOf(d.Instance.Status)
	m := staffview.DetailModel{Chrome: s.StaffChrome(c, fmt.Sprintf(staffpage.StaffTextIn(c).DetTitle, id)), ID: strconv.FormatInt(id, 10),
		UserKey: d.Instance.UserKey, State: StateLabel(c, st), StateKey: string(st), Period: d.Period.Name,
		Started: staffWhen(c, d.Instance.StartTime), Updated: staffWhen(c, d.Instance.UpdatedAt),
		Definition: fmt.Sprintf("%s (v%d)", cmp.Or(d.Definition.Name, d.Definition.Key), d.Definition.Version), Audit: s.staffAuditRows(c, audit),
		Today: s.clubToday(c, u.OrganisationID).Format(time.DateOnly)}
	names := map[int64]string{}
	for _, p := range d.Household {
		names[p.ID] = strings.TrimSpace(p.FirstName + " " + p.LastName)
	}
	m.Household = householdRows(c, d)
	m.Steps = answerRows(c, d, names)
	if a := d.Archive; a != nil {
		format := staffRegistrationTextIn(c).ArchivedRemoved
		if a.Kept() {
			format = staffRegistrationTextIn(c).ArchivedKept
		}
		m.Archive = fmt.Sprintf(format, server.LangOf(c).Date(a.ArchivedAt.UTC()), a.Answers, a.Persons())
	}
	if o := d.Order; o != nil {
		om := &staffview.OrderModel{Reference: o.PayReference, Status: staffpage.StatusLabel(c, string(o.Status)), Total: staffpage.StaffMoney(c, o.TotalMinor, o.Currency),
			Created: staffWhen(c, o.CreatedAt), TransferReference: transferReference(d)}
		if o.PaidAt != nil {
			om.Paid = staffWhen(c, *o.PaidAt)
		}
		for _, l := range o.Lines {
			om.Lines = append(om.Lines, views.OrderLineModel{Description: l.Description, Amount: staffpage.StaffMoney(c, l.AmountMinor, l.Currency)})
		}
		m.Order = om
	}
	m.Mandate = staffMandate(c, u.Role, id, d.Mandate)
	refundURL := ""
	if u.Role.AtLeast(staff.RoleTreasurer) {
		refundURL = RegistrationURL(c, id) + "/refund"
	}
	m.History = historyEntries(c, d, refundURL)
	m.Actions = detailActions(u.Role, d, RegistrationURL(c, id))
	var due *banking.Transfer
	if d.Order != nil && d.Order.Status == engine.OrderUnpaid {
		// What is still owed: the total less the parts that arrived (the
		// same answer the pay page gives).
		if due, err = payment.Of(s.engine).BankTransferDue(ctx, d.Order.ID); err != nil {
			return s.StaffEngineError(c, err)
		}
	}
	if m.Actions.Capture != "" && due != nil {
		m.Actions.CaptureAmount = engine.FormatAmount(due.AmountMinor)
		if received := d.Order.TotalMinor - due.AmountMinor; received > 0 {
			m.Actions.CaptureOwed = fmt.Sprintf(staffpage.StaffTextIn(c).CapStillOwed, staffpage.StaffMoney(c, received, due.Currency), staffpage.StaffMoney(c, due.AmountMinor, due.Currency))
		}
	}
	if words := CaptureWords(c, c.QueryParam("done"), d, due); words != "" {
		m.Flash = words
	}
	if err := s.registrationPrivacy(c, d, &m); err != nil { // consents and the access log: persons.go
		return s.StaffEngineError(c, err)
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Detail(m))
}

// transferReference is the RF reference members write on their transfer
// (the newest bank-transfer attempt's: an order's attempts share it), ""
// when the order is not paid by transfer.
func transferReference(d *staff.RegistrationDetail) string {
	for i := len(d.Payments) - 1; i >= 0; i-- {
		if p := d.Payments[i]; p.Provider == payment.BankTransferProvider && p.ProviderID != nil {
			if rf, err := banking.ParseReference(*p.ProviderID); err == nil {
				return rf.String()
			}
			return ""
		}
	}
	return ""
}

// householdRows are the persons of this registration (not every person
// of the user key), each with the memberships it asked for and their
// state: a person whose membership waits for payment is shown so.
func householdRows(c echo.Context, d *staff.RegistrationDetail) []staffview.PersonRow {
	byPerson := map[int64][]staffview.PersonMembership{}
	for _, ms := range d.Memberships {
		key := "cancelled"
		switch ms.Status {
		case engine.MembershipActive:
			key = "active"
		case engine.MembershipPending:
			key = "pending"
		}
		byPerson[ms.PersonID] = append(byPerson[ms.PersonID], staffview.PersonMembership{
			Type:   ms.TypeTexts.In(server.LangOf(c).Code, ms.TypeName) + " (" + staffpage.MemberTypeLabel(c, ms.MemberType) + ")",
			Status: staffpage.StatusLabel(c, string(ms.Status)), StatusKey: key})
	}
	var rows []staffview.PersonRow
	for _, p := range d.Household {
		if !d.Selected[p.ID] && byPerson[p.ID] == nil {
			continue
		}
		row := staffview.PersonRow{Name: strings.TrimSpace(p.FirstName + " " + p.LastName),
			Born: fmt.Sprintf(staffRegistrationTextIn(c).Born, server.LangOf(c).Date(p.DateOfBirth)), Email: p.Email, Memberships: byPerson[p.ID]}
		if staffpage.StaffUserOf(c).Role.AtLeast(staff.RoleRegistrar) {
			row.DataURL = staffPersonURL(c, p.ID)
		}
		rows = append(rows, row)
	}
	return rows
}

// answerRows are the questions in the page's language with the answers
// as the member's pages show them: a choice by its label, Yes or No.
func answerRows(c echo.Context, d *staff.RegistrationDetail, names map[int64]string) []staffview.StepRow {
	if d.Archive != nil {
		return nil
	}
	t := staffRegistrationTextIn(c)
	var rows []staffview.StepRow
	for _, as := range d.Steps {
		step, err := definition.StepInLanguage(as.Step, server.LangOf(c).Code)
		if err != nil {
			step = as.Step // the stored default language's texts
		}
		row := staffview.StepRow{Question: step.QuestionText}
		for _, a := range as.Answers {
			shown := registration.DisplayAnswer(&step, a.Value)
			switch step.QuestionType {
			case engine.TypeCheckbox, engine.TypeAccept, engine.TypeOne:
				shown = t.No
				if a.Value == "1" {
					shown = t.Yes
				}
			}
			if a.PersonID != nil {
				shown = names[*a.PersonID] + ": " + shown
			}
			row.Answers = append(row.Answers, shown)
		}
		rows = append(rows, row)
	}
	return rows
}

// providerLabel names a payment provider as a way of paying.
func providerLabel(c echo.Context, provider string) string {
	t := staffRegistrationTextIn(c)
	switch provider {
	case payment.BankTransferProvider:
		return t.ProviderBank
	case payment.StripeProvider:
		return t.ProviderCard
	case payment.TestGatewayProvider:
		return t.ProviderTest
	}
	return provider
}

// MessageLabel names the kind of a message about a registration.
func MessageLabel(c echo.Context, kind engine.MessageKind) string {
	t := staffRegistrationTextIn(c)
	switch kind {
	case payment.KindConfirmation:
		return t.MsgConfirmation
	case payment.KindPaymentLink:
		return t.MsgPaymentLink
	case message.KindUnpaidReminder:
		return t.MsgReminder
	case payment.KindTransferRequest:
		return t.MsgTransferRequest
	case message.KindWelcome:
		return t.MsgWelcome
	case message.KindExpiryReminder:
		return t.MsgExpiry
	case message.KindRenewalPrompt:
		return t.MsgRenewal
	case registration.KindResumeLink:
		return t.MsgResume
	case payment.KindRefundPayment:
		return t.MsgRefund
	case directdebit.KindDebitReturned:
		return t.MsgDebitReturned
	case directdebit.KindMandateNotice:
		return t.MsgMandate
	}
	return t.MsgOther
}

// eventTitle says what a payment event was.
func eventTitle(c echo.Context, p engine.Payment, e engine.PaymentEvent) (title, kind string) {
	t := staffRegistrationTextIn(c)
	amount := ""
	if e.AmountMinor != nil && e.Currency != nil {
		amount = staffpage.StaffMoney(c, *e.AmountMinor, *e.Currency)
	}
	switch {
	case e.EventType == directdebit.DebitReturnEvent:
		return fmt.Sprintf(t.EvReturned, amount), "attempt"
	case e.Outcome == payment.OutcomePartial:
		return fmt.Sprintf(t.EvPart, amount), "payment"
	case e.Outcome == engine.OutcomeSuccess && p.Provider == payment.BankTransferProvider:
		return fmt.Sprintf(t.EvReceived, amount), "payment"
	case e.Outcome == engine.OutcomeSuccess:
		return fmt.Sprintf(t.EvConfirmed, amount), "payment"
	case e.Outcome == engine.OutcomeFailed:
		return t.EvFailed, "attempt"
	case e.Outcome == engine.OutcomeCancelled:
		return t.EvCancelled, "attempt"
	case e.Outcome == engine.OutcomePending:
		return t.EvPending, "attempt"
	}
	return t.EvOpen, "attempt"
}

// eventDetail words what an event's note records ("booked 2026-01-02;
// captured by Tina; note"): the booking date in the page's language and
// who recorded it; a free note as written.
func eventDetail(c echo.Context, e engine.PaymentEvent) string {
	t := staffRegistrationTextIn(c)
	var parts []string
	if e.EventType == "retrieval" {
		parts = append(parts, t.EvChecked)
	}
	for part := range strings.SplitSeq(e.Note, "; ") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), ";"))
		switch {
		case part == "", strings.HasPrefix(part, "partial: "):
			// A part's sum so far: the title says it is a part, the
			// capture form what is still owed.
		case strings.HasPrefix(part, "booked "):
			if d, err := time.Parse(time.DateOnly, strings.TrimPrefix(part, "booked ")); err == nil {
				part = fmt.Sprintf(t.Booked, server.LangOf(c).Date(d))
			}
			parts = append(parts, part)
		case strings.HasPrefix(part, "captured by "):
			parts = append(parts, fmt.Sprintf(t.RecordedBy, strings.TrimPrefix(part, "captured by ")))
		default:
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, "; ")
}

// historyEntry is an entry with the moment it sorts by.
type historyEntry struct {
	at time.Time
	staffview.HistoryEntry
}

// historyEntries are the payment attempts, what their providers and
// captures reported, refunds and every message with its recipient,
// oldest first. refundURL is "" when the role may not refund.
func historyEntries(c echo.Context, d *staff.RegistrationDetail, refundURL string) []staffview.HistoryEntry {
	t := staffRegistrationTextIn(c)
	var out []historyEntry
	add := func(at time.Time, e staffview.HistoryEntry) {
		e.At = staffWhen(c, at)
		out = append(out, historyEntry{at: at, HistoryEntry: e})
	}
	for _, p := range d.Payments {
		attempt := staffview.HistoryEntry{Kind: "attempt", Title: fmt.Sprintf(t.AttemptStarted, providerLabel(c, p.Provider), staffpage.StaffMoney(c, p.AmountMinor, p.Currency)),
			Detail: fmt.Sprintf(t.Reference, p.Reference), Status: staffpage.StatusLabel(c, string(p.Status)), Problem: p.Problem}
		if refundURL != "" && p.Status == engine.PaymentSucceeded && p.RefundStatus != engine.RefundDone {
			attempt.RefundURL, attempt.RefundRef = refundURL, p.Reference
		}
		add(p.CreatedAt, attempt)
		for _, e := range p.Events {
			title, kind := eventTitle(c, p.Payment, e)
			add(e.CreatedAt, staffview.HistoryEntry{Kind: kind, Title: title, Detail: eventDetail(c, e)})
		}
		amount := staffpage.StaffMoney(c, cmp.Or(ptrValue(p.PaidAmountMinor), p.AmountMinor), cmp.Or(ptrValue(p.PaidCurrency), p.Currency))
		switch p.RefundStatus {
		case engine.RefundDue:
			add(p.UpdatedAt, staffview.HistoryEntry{Kind: "refund", Title: fmt.Sprintf(t.RefundDue, amount)})
		case engine.RefundDone:
			at := p.UpdatedAt
			if p.RefundedAt != nil {
				at = *p.RefundedAt
			}
			add(at, staffview.HistoryEntry{Kind: "refund", Title: fmt.Sprintf(t.RefundDone, amount), Detail: cmp.Or(p.RefundNote, ptrValue(p.RefundID))})
		}
	}
	// A message whose recipients are chosen when it is sent (the
	// transfer request) names none: it goes to the registration's persons.
	var addresses []string
	for _, p := range d.Household {
		if d.Selected[p.ID] && p.Email != "" && !slices.Contains(addresses, p.Email) {
			addresses = append(addresses, p.Email)
		}
	}
	for _, msg := range d.Messages {
		e := staffview.HistoryEntry{Kind: "message", Title: MessageLabel(c, msg.Kind)}
		switch {
		case msg.Recipient != "":
			e.Detail = fmt.Sprintf(t.MsgTo, msg.Recipient)
		case len(addresses) > 0:
			e.Detail = fmt.Sprintf(t.MsgTo, strings.Join(addresses, ", "))
		default:
			e.Detail = t.MsgToRegistration
		}
		switch {
		case msg.SentAt != nil:
			e.Status = fmt.Sprintf(staffpage.StaffTextIn(c).DelSent, staffWhen(c, *msg.SentAt))
		case msg.JobState == jobs.StateDead:
			e.Status, e.Problem = staffpage.StaffTextIn(c).DelDead, msg.LastError
		case msg.JobState == jobs.StateFailed:
			e.Status, e.Problem = fmt.Sprintf(staffpage.StaffTextIn(c).DelFailed, msg.Attempts), msg.LastError
		case msg.JobState == jobs.StateSucceeded:
			e.Status = staffpage.StaffTextIn(c).DelSkipped
		default:
			e.Status = staffpage.StaffTextIn(c).DelQueued
		}
		add(msg.CreatedAt, e)
	}
	slices.SortStableFunc(out, func(a, b historyEntry) int { return a.at.Compare(b.at) })
	entries := make([]staffview.HistoryEntry, len(out))
	for i, e := range out {
		entries[i] = e.HistoryEntry
	}
	return entries
}

// ptrValue is what p points to, the zero value for nil.
func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// CaptureWords states in words what a capture left, from the state the
// registration is in now (a form sent twice finds it so): complete; a
// part arrived and what remains; paid already and what is owed back. ""
// when done names no capture.
func CaptureWords(c echo.Context, done string, d *staff.RegistrationDetail, due *banking.Transfer) string {
	if !strings.HasPrefix(done, "captured") || d.Order == nil {
		return ""
	}
	t := staffRegistrationTextIn(c)
	o := d.Order
	if done == "captured-second" {
		var owed int64
		for _, p := range d.Payments {
			if p.RefundStatus == engine.RefundDue {
				owed += cmp.Or(ptrValue(p.PaidAmountMinor), p.AmountMinor)
			}
		}
		if owed > 0 {
			return fmt.Sprintf(t.CapturedSecond, staffpage.StaffMoney(c, owed, o.Currency))
		}
	}
	switch {
	case o.Status == engine.OrderPaid:
		return fmt.Sprintf(t.CapturedComplete, staffpage.StaffMoney(c, o.TotalMinor, o.Currency))
	case due != nil && due.AmountMinor < o.TotalMinor:
		return fmt.Sprintf(t.CapturedPart, staffpage.StaffMoney(c, o.TotalMinor-due.AmountMinor, due.Currency), staffpage.StaffMoney(c, due.AmountMinor, due.Currency))
	}
	return ""
}

// detailActions are the actions a role may take on d now.
func detailActions(role staff.StaffRole, d *staff.RegistrationDetail, base string) staffview.DetailActions {
	var a staffview.DetailActions
	o := d.Order
	finished := d.Instance.Status == engine.StateCancelled || d.Instance.Status == engine.StateCompleted || d.Instance.Status == engine.StateFailed
	if role.AtLeast(staff.RoleRegistrar) {
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
	if role.AtLeast(staff.RoleTreasurer) && o != nil && o.Status == engine.OrderUnpaid {
		for _, p := range d.Payments {
			if p.Provider == payment.BankTransferProvider {
				a.Capture, a.CaptureCurrency = base+"/capture", o.Currency
				break
			}
		}
	}
	return a
}

// staffDone goes back to the registration with a result message (PRG).
func staffDone(c echo.Context, id int64, done string) error {
	return c.Redirect(http.StatusSeeOther, RegistrationURL(c, id)+"?done="+done)
}

// StaffResendConfirmation answers POST /staff/registrations/:id/resend-confirmation.
func (s *Server) StaffResendConfirmation(c echo.Context) error {
	return s.staffAction(c, "resent-confirmation", func(u *staffpage.StaffUser, id int64) error {
		return staff.Of(s.engine).ResendConfirmation(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	})
}

// StaffResendPaymentLink answers POST /staff/registrations/:id/resend-payment-link.
func (s *Server) StaffResendPaymentLink(c echo.Context) error {
	return s.staffAction(c, "resent-link", func(u *staffpage.StaffUser, id int64) error {
		return staff.Of(s.engine).ResendPaymentLink(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	})
}

// StaffResetRegistration answers POST /staff/registrations/:id/reset, after a confirmation.
func (s *Server) StaffResetRegistration(c echo.Context) error {
	t := staffRegistrationTextIn(c)
	q := staffpage.StaffQuestion{Question: staffpage.StaffTextIn(c).ConfirmReset, Detail: staffpage.StaffTextIn(c).ConfirmResetDetail, Yes: t.ResetYes, No: t.ResetNo}
	return s.staffConfirmedAction(c, q, "reset", func(u *staffpage.StaffUser, id int64) error {
		return staff.Of(s.engine).StaffReset(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	})
}

// StaffCancelRegistration answers POST /staff/registrations/:id/cancel, after a confirmation.
func (s *Server) StaffCancelRegistration(c echo.Context) error {
	t := staffRegistrationTextIn(c)
	q := staffpage.StaffQuestion{Question: staffpage.StaffTextIn(c).ConfirmCancel, Detail: staffpage.StaffTextIn(c).ConfirmCancelDetail, Yes: t.CancelYes, No: t.CancelNo}
	return s.staffConfirmedAction(c, q, "cancelled", func(u *staffpage.StaffUser, id int64) error {
		return staff.Of(s.engine).CancelRegistration(c.Request().Context(), u.Actor(), u.OrganisationID, id)
	})
}

// StaffRefund answers POST /staff/registrations/:id/refund (payment=REF), after a confirmation.
func (s *Server) StaffRefund(c echo.Context) error {
	ref := c.FormValue("payment")
	t := staffRegistrationTextIn(c)
	q := staffpage.StaffQuestion{Question: fmt.Sprintf(staffpage.StaffTextIn(c).ConfirmRefund, ref), Detail: staffpage.StaffTextIn(c).ConfirmRefundDetail, Yes: t.RefundYes, No: t.RefundNo}
	return s.staffConfirmedAction(c, q, "refunded", func(u *staffpage.StaffUser, id int64) error {
		return staff.Of(s.engine).RefundPayment(c.Request().Context(), u.Actor(), u.OrganisationID, id, ref, "")
	})
}

// CaptureBackToOpenPayments is the capture form's back= when it was sent
// from the open payments list: the result is shown there.
const CaptureBackToOpenPayments = "open-payments"

// StaffCapture answers POST /staff/registrations/:id/capture: amount,
// booked (a date, not in the future), note, and back=open-payments when
// sent from that list. The result is named in ?done= and stated in words
// by the page it leads to, from the state it finds.
func (s *Server) StaffCapture(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	amount, err := engine.ParseAmount(strings.TrimSpace(c.FormValue("amount")))
	if err != nil || amount <= 0 {
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffTextIn(c).BadAmount)
	}
	booked, err := time.Parse(time.DateOnly, strings.TrimSpace(c.FormValue("booked")))
	if today := s.clubToday(c, u.OrganisationID); err != nil || booked.Format(time.DateOnly) > today.Format(time.DateOnly) {
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffTextIn(c).BadDate)
	}
	note := strings.TrimSpace(c.FormValue("note"))
	if len(note) > 200 {
		note = note[:200]
	}
	res, err := staff.Of(s.engine).CaptureForRegistration(c.Request().Context(), u.Actor(), u.OrganisationID, id, payment.Capture{AmountMinor: amount, BookedOn: booked, Note: note})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	done := "captured" // the form sent twice: captured once
	switch {
	case res.SecondCredit && !res.Replayed:
		done = "captured-second"
	case res.Problem == "partial":
		// Part arrived (now, or this form again finds it so): the page
		// says what is still owed and pre-fills the capture with it.
		done = "captured-partial"
	case res.Problem != "":
		done = "captured-problem"
	}
	if c.FormValue("back") == CaptureBackToOpenPayments {
		back := staffpage.RequestOf(c).StaffPath(server.OpenPaymentsPath) + "?" + url.Values{"done": {done}, "registration": {strconv.FormatInt(id, 10)}}.Encode()
		return c.Redirect(http.StatusSeeOther, back)
	}
	return staffDone(c, id, done)
}

// staffAction runs a registration action and goes back to it.
func (s *Server) staffAction(c echo.Context, done string, act func(*staffpage.StaffUser, int64) error) error {
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if err := act(staffpage.StaffUserOf(c), id); err != nil {
		return s.StaffEngineError(c, err)
	}
	return staffDone(c, id, done)
}

// staffConfirmedAction asks q first (staffAsked), then runs the action.
func (s *Server) staffConfirmedAction(c echo.Context, q staffpage.StaffQuestion, done string, act func(*staffpage.StaffUser, int64) error) error {
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if ok, err := s.StaffAsked(c, q, RegistrationURL(c, id)); !ok {
		return err
	}
	return s.staffAction(c, done, act)
}

// staffMandate is a registration's mandate on the staff registration
// page; treasurers and administrators may revoke one that holds.
func staffMandate(c echo.Context, role staff.StaffRole, registration int64, m *directdebit.DebitMandate) *staffview.MandateModel {
	if m == nil {
		return nil
	}
	out := &staffview.MandateModel{Reference: m.Reference, CreditorID: m.CreditorID, Holder: m.Holder, IBAN: m.IBAN, BIC: m.BIC,
		Language: m.Language, Signed: staffpage.StaffDateTime(c, m.SignedAt), Version: m.TextVersion, Text: m.Text}
	switch {
	case m.RevokedAt != nil:
		out.Ended = staffpage.StaffDateTime(c, *m.RevokedAt)
		if m.EndReason != "" { // an erasure ends a mandate without naming why
			out.Ended += " · " + staffview.MandateTextIn(c.Request().Context()).EndReason(m.EndReason)
		}
	case role.AtLeast(staff.RoleTreasurer):
		out.RevokeAction = staffpage.RequestOf(c).Path(fmt.Sprintf("%s/mandates/%d/revoke", server.StaffPrefix, m.ID))
		out.Registration = strconv.FormatInt(registration, 10)
	}
	return out
}

// clubToday is now in the club's time zone (engine.Organisation.TimeZone):
// the day a capture is booked on by default, and the last it may be.
func (s *Server) clubToday(c echo.Context, orgID int64) time.Time {
	org, err := s.engine.Organisation(c.Request().Context(), orgID)
	if err != nil {
		return clock.Now().In(engine.Organisation{}.Location())
	}
	return clock.Now().In(org.Location())
}
