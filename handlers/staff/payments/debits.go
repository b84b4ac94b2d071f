package payments

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/privacy"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// The treasurer's direct-debit collection runs (issue 29): the list and
// the form that prepares a run, one run with its debits, its file, and
// marking it sent or cancelling it. The engine writes the file, settles
// and audits; these pages ask, show and say in words what happened.

// The results of the run actions, named in ?done= (staffFlashes); how
// many registrations marking sent completed comes in ?settled= and
// ?problems= (numbers only: the words are ours).
const (
	flashDebitRunPrepared         = "debit-run-prepared"
	flashDebitRunSent             = "debit-run-sent"
	flashDebitRunAlreadySent      = "debit-run-already-sent"
	flashDebitRunCancelled        = "debit-run-cancelled"
	flashDebitRunAlreadyCancelled = "debit-run-already-cancelled"
)

func init() {
	staffpage.StaffFlashes[flashDebitRunPrepared] = func(c echo.Context) string { return staffpage.StaffDebitTextIn(c).DonePrepared }
	staffpage.StaffFlashes[flashDebitRunAlreadySent] = func(c echo.Context) string { return staffpage.StaffDebitTextIn(c).DoneAlreadySent }
	staffpage.StaffFlashes[flashDebitRunCancelled] = func(c echo.Context) string { return staffpage.StaffDebitTextIn(c).DoneCancelled }
	staffpage.StaffFlashes[flashDebitRunAlreadyCancelled] = func(c echo.Context) string { return staffpage.StaffDebitTextIn(c).DoneAlreadyCancelled }
	staffpage.StaffFlashes[flashDebitRunSent] = func(c echo.Context) string {
		t := staffpage.StaffDebitTextIn(c)
		settled, _ := strconv.Atoi(c.QueryParam("settled"))
		out := fmt.Sprintf(t.DoneSent, max(settled, 0))
		if problems, err := strconv.Atoi(c.QueryParam("problems")); err == nil && problems > 0 {
			out += " " + fmt.Sprintf(t.DoneSentProblems, problems)
		}
		return out
	}
}

// debitRunURL is the page of one run below StaffPrefix, with the organisation's base.
func debitRunURL(c echo.Context, id int64) string {
	return staffpage.RequestOf(c).StaffPath(server.StaffDebitsPath + "/" + strconv.FormatInt(id, 10))
}

// StaffDebitRuns answers GET /staff/debits (viewer and up): the runs,
// newest first, and for treasurers of a club that collects by direct
// debit the form that prepares the next. ?nothing=DATE says that a run
// asked for that date found nothing due.
func (s *Server) StaffDebitRuns(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	t := staffpage.StaffDebitTextIn(c)
	ctx := c.Request().Context()
	runs, err := directdebit.Of(s.engine).DebitRuns(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	m := staffview.DebitRunsModel{Chrome: s.StaffChrome(c, t.Title),
		Until: directdebit.DefaultCollectionUntil(clock.Now()).Format(time.DateOnly)}
	if u.Role.AtLeast(staff.RoleTreasurer) {
		ps, err := settings.Of(s.engine).PaymentSettings(ctx, u.OrganisationID)
		if err != nil {
			return s.StaffEngineError(c, err)
		}
		if ps.DebitCreditorID == "" {
			m.NoCreditor = true
		} else {
			m.PrepareURL = staffpage.RequestOf(c).StaffPath(server.StaffDebitsPath)
		}
	}
	// Only a date is taken from the address; the sentence is ours.
	if d, err := time.Parse(time.DateOnly, c.QueryParam("nothing")); err == nil {
		m.Notice, m.Until = fmt.Sprintf(t.NothingDue, staffpage.StaffDate(c, d)), d.Format(time.DateOnly)
	}
	if d, err := time.Parse(time.DateOnly, c.QueryParam("leftout")); err == nil {
		m.Notice, m.Until = fmt.Sprintf(t.NoneCollectable, staffpage.StaffDate(c, d)), d.Format(time.DateOnly)
		m.AttentionURL = staffpage.RequestOf(c).StaffPath("/payments")
	}
	for _, r := range runs {
		m.Runs = append(m.Runs, debitRunRow(c, r))
		if m.Notice != "" && r.Status == payment.DebitRunPrepared && !strings.HasSuffix(m.Notice, t.NothingDueInRun) {
			m.Notice += " " + t.NothingDueInRun
		}
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.DebitRuns(m))
}

// debitRunRow prints a run as the list and its page show it.
func debitRunRow(c echo.Context, r payment.DebitRun) staffview.DebitRunRow {
	t := staffpage.StaffDebitTextIn(c)
	row := staffview.DebitRunRow{ID: strconv.FormatInt(r.ID, 10), URL: debitRunURL(c, r.ID), MessageID: r.MessageID,
		Created: staffpage.StaffDateTime(c, r.CreatedAt), CreatedBy: r.CreatedBy, Until: staffpage.StaffDate(c, r.UntilOn), Count: strconv.Itoa(r.DebitCount),
		Total: staffpage.StaffMoney(c, r.TotalMinor, r.Currency), Version: r.FileVersion, StatusKey: string(r.Status)}
	switch r.Status {
	case payment.DebitRunSent:
		row.Status = t.StatusSent
		if r.SentAt != nil {
			row.StatusAt = fmt.Sprintf(t.SentAt, staffpage.StaffDateTime(c, *r.SentAt))
		}
	case payment.DebitRunCancelled:
		row.Status = t.StatusCancelled
		if r.CancelledAt != nil {
			row.StatusAt = fmt.Sprintf(t.CancelledAt, staffpage.StaffDateTime(c, *r.CancelledAt))
		}
	default:
		row.Status = t.StatusPrepared
	}
	return row
}

// StaffPrepareDebitRun answers POST /staff/debits (treasurer and up;
// until=YYYY-MM-DD): the collection run of the debits due by then, and
// its page, which names the debits left out of the file. Nothing due is
// not a failure, nor are due debits none of which can go into a file:
// the list says so.
func (s *Server) StaffPrepareDebitRun(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	t := staffpage.StaffDebitTextIn(c)
	until, err := time.Parse(time.DateOnly, strings.TrimSpace(c.FormValue("until")))
	if err != nil {
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, t.BadUntil)
	}
	ctx := c.Request().Context()
	ps, err := settings.Of(s.engine).PaymentSettings(ctx, u.OrganisationID)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	if ps.DebitCreditorID == "" {
		return s.StaffErrorPage(c, http.StatusConflict, t.NoCreditor)
	}
	run, err := directdebit.Of(s.engine).CollectDebits(ctx, directdebit.CollectRequest{OrganisationID: u.OrganisationID, Until: until, Actor: u.Actor()})
	if errors.Is(err, directdebit.ErrNothingDue) {
		return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffDebitsPath)+"?"+url.Values{"nothing": {until.Format(time.DateOnly)}}.Encode())
	}
	if errors.Is(err, directdebit.ErrNoneCollectable) {
		return c.Redirect(http.StatusSeeOther, staffpage.RequestOf(c).StaffPath(server.StaffDebitsPath)+"?"+url.Values{"leftout": {until.Format(time.DateOnly)}}.Encode())
	}
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, debitRunURL(c, run.ID)+"?done="+flashDebitRunPrepared)
}

// StaffDebitRun answers GET /staff/debits/{id} (viewer and up): the run,
// its debits, and the actions the role may take on it now.
func (s *Server) StaffDebitRun(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	t := staffpage.StaffDebitTextIn(c)
	d, answered := s.staffDebitRunOf(c)
	if d == nil {
		return answered
	}
	r := d.Run
	row := debitRunRow(c, r)
	m := staffview.DebitRunModel{Chrome: s.StaffChrome(c, fmt.Sprintf(t.RunTitle, r.MessageID)), Run: row,
		Intro:   fmt.Sprintf(t.RunIntro, row.Created, r.CreatedBy, row.Until, r.DebitCount, row.Total, r.FileVersion),
		BackURL: staffpage.RequestOf(c).StaffPath(server.StaffDebitsPath)}
	if u.Role.AtLeast(staff.RoleTreasurer) {
		base := debitRunURL(c, r.ID)
		if r.Status != payment.DebitRunCancelled {
			m.FileURL = base + "/file"
		}
		if r.Status == payment.DebitRunPrepared {
			m.SentURL, m.CancelURL = base+"/sent", base+"/cancel"
		}
	}
	for _, l := range d.Debits {
		m.Debits = append(m.Debits, debitLine(c, l))
	}
	for _, l := range d.LeftOut {
		m.LeftOut = append(m.LeftOut, staffview.DebitLeftOut{RegistrationID: strconv.FormatInt(l.RegistrationID, 10),
			RegistrationURL: registrations.RegistrationURL(c, l.RegistrationID), OrderReference: l.OrderReference, MandateReference: l.MandateReference,
			Holder: l.Holder, IBAN: l.MaskedIBAN, Amount: staffpage.StaffMoney(c, l.AmountMinor, l.Currency), Reason: l.Problem})
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.DebitRun(m))
}

// debitLine prints one debit of a run.
func debitLine(c echo.Context, l directdebit.DebitLine) staffview.DebitLine {
	t := staffpage.StaffDebitTextIn(c)
	out := staffview.DebitLine{EndToEndID: l.EndToEndID, RegistrationID: strconv.FormatInt(l.RegistrationID, 10),
		RegistrationURL: registrations.RegistrationURL(c, l.RegistrationID), MandateReference: l.MandateReference, Holder: l.Holder, IBAN: l.MaskedIBAN,
		Amount: staffpage.StaffMoney(c, l.AmountMinor, l.Currency), Due: staffpage.StaffDate(c, l.DueOn), StatusKey: string(l.Status), Amended: l.Amended,
		MandateEnded: l.MandateEnded && l.Status == payment.DebitInRun}
	out.Sequence = t.SeqRecurring
	if l.Sequence == banking.SequenceFirst {
		out.Sequence = t.SeqFirst
	}
	switch l.Status {
	case payment.DebitCollected:
		out.Status = t.DebitCollected
	case payment.DebitReturned:
		out.Status = t.DebitReturned
		if l.ReturnCode != "" {
			out.ReturnCode = l.ReturnCode + ": " + banking.ReturnReasonText(l.ReturnCode, server.LangOf(c).Code)
		}
	case payment.DebitCancelled:
		out.Status = t.DebitCancelled
	default:
		out.Status = t.DebitInRun
	}
	return out
}

// StaffDebitRunFile answers GET /staff/debits/{id}/file (treasurer and
// up): the run's pain.008 file exactly as it was first written, as a
// download; a sent run still downloads, a cancelled one does not (it must
// not reach the bank any more).
func (s *Server) StaffDebitRunFile(c echo.Context) error {
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	u := staffpage.StaffUserOf(c)
	// The same rule as the admin API's and portal debits file's: a
	// cancelled run's file is not handed out.
	run, err := directdebit.Of(s.engine).DebitRunFile(c.Request().Context(), u.OrganisationID, id)
	if engine.ErrorCode(err) == engine.CodeConflict {
		return s.StaffErrorPage(c, http.StatusConflict, staffpage.StaffDebitTextIn(c).IsCancelled)
	}
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	// Every debtor's name and account: one access log entry first.
	if err := privacy.Of(s.engine).RecordAccess(c.Request().Context(), u.Actor(), privacy.DebitRunFileRead(u.OrganisationID, run.ID)); err != nil {
		return s.StaffEngineError(c, err)
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+directdebit.DebitRunFileName(*run)+`"`)
	return c.Blob(http.StatusOK, "application/xml", run.File)
}

// staffDebitRunOf loads the run the path names, of the staff member's
// club; nil when the answer (not found, an engine error) was written,
// whose error the caller returns.
func (s *Server) staffDebitRunOf(c echo.Context) (*directdebit.DebitRunDetail, error) {
	id, ok := server.PathID(c, "id")
	if !ok {
		return nil, s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	d, err := directdebit.Of(s.engine).DebitRunByID(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID, id)
	if err != nil {
		return nil, s.StaffEngineError(c, err)
	}
	return d, nil
}

// debitRunAction reads the run a POST names and checks that it may still
// be changed: a run already in the state the action leads to is
// answered by a redirect to its page saying so (a repeated post), one in
// the other final state by a conflict page in words. ok is false when
// the caller returns err.
func (s *Server) debitRunAction(c echo.Context, goal payment.DebitRunStatus) (d *directdebit.DebitRunDetail, ok bool, err error) {
	t := staffpage.StaffDebitTextIn(c)
	d, answered := s.staffDebitRunOf(c)
	if d == nil {
		return nil, false, answered
	}
	id := d.Run.ID
	switch {
	case d.Run.Status == payment.DebitRunPrepared:
		return d, true, nil
	case d.Run.Status == goal && goal == payment.DebitRunSent:
		return nil, false, c.Redirect(http.StatusSeeOther, debitRunURL(c, id)+"?done="+flashDebitRunAlreadySent)
	case d.Run.Status == goal:
		return nil, false, c.Redirect(http.StatusSeeOther, debitRunURL(c, id)+"?done="+flashDebitRunAlreadyCancelled)
	case d.Run.Status == payment.DebitRunSent:
		return nil, false, s.StaffErrorPage(c, http.StatusConflict, t.IsSent)
	default:
		return nil, false, s.StaffErrorPage(c, http.StatusConflict, t.IsCancelled)
	}
}

// inRun counts the debits of a run still waiting to be sent.
func inRun(d *directdebit.DebitRunDetail) int {
	n := 0
	for _, l := range d.Debits {
		if l.Status == payment.DebitInRun {
			n++
		}
	}
	return n
}

// StaffMarkDebitRunSent answers POST /staff/debits/{id}/sent (treasurer
// and up), after asking: the run is sent and its payments settled; the
// run's page then says how many registrations that completed.
func (s *Server) StaffMarkDebitRunSent(c echo.Context) error {
	t := staffpage.StaffDebitTextIn(c)
	d, ok, err := s.debitRunAction(c, payment.DebitRunSent)
	if !ok {
		return err
	}
	back := debitRunURL(c, d.Run.ID)
	q := staffpage.StaffQuestion{Question: fmt.Sprintf(t.SentQuestion, d.Run.MessageID), Detail: fmt.Sprintf(t.SentDetail, inRun(d)), Yes: t.SentYes, No: t.SentNo}
	if asked, err := s.StaffAsked(c, q, back); !asked {
		return err
	}
	u := staffpage.StaffUserOf(c)
	res, err := directdebit.Of(s.engine).MarkDebitRunSent(c.Request().Context(), u.Actor(), u.OrganisationID, d.Run.ID)
	if err != nil {
		return s.debitRunEngineError(c, err)
	}
	for _, p := range res.Problems {
		s.LogFor(c).Warn("a debit of a collection run did not settle", "run", d.Run.ID, "problem", p)
	}
	v := url.Values{"done": {flashDebitRunSent}, "settled": {strconv.Itoa(res.Settled)}}
	if len(res.Problems) > 0 {
		v.Set("problems", strconv.Itoa(len(res.Problems)))
	}
	return c.Redirect(http.StatusSeeOther, back+"?"+v.Encode())
}

// StaffCancelDebitRun answers POST /staff/debits/{id}/cancel (treasurer
// and up), after asking: the run is withdrawn as a whole and its debits
// are due again for the next run.
func (s *Server) StaffCancelDebitRun(c echo.Context) error {
	t := staffpage.StaffDebitTextIn(c)
	d, ok, err := s.debitRunAction(c, payment.DebitRunCancelled)
	if !ok {
		return err
	}
	back := debitRunURL(c, d.Run.ID)
	q := staffpage.StaffQuestion{Question: fmt.Sprintf(t.CancelQuestion, d.Run.MessageID), Detail: fmt.Sprintf(t.CancelDetail, inRun(d)),
		Yes: t.CancelYes, No: t.CancelNo}
	if asked, err := s.StaffAsked(c, q, back); !asked {
		return err
	}
	u := staffpage.StaffUserOf(c)
	if _, err := directdebit.Of(s.engine).CancelDebitRun(c.Request().Context(), u.Actor(), u.OrganisationID, d.Run.ID); err != nil {
		return s.debitRunEngineError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+flashDebitRunCancelled)
}

// debitRunEngineError answers a refused run action: the run changed
// between the question and the answer (another treasurer, or the job
// that marks a run whose due date passed), said in words from its state
// now; anything else as every staff action does.
func (s *Server) debitRunEngineError(c echo.Context, err error) error {
	if engine.ErrorCode(err) == engine.CodeConflict {
		if id, ok := server.PathID(c, "id"); ok {
			if d, lerr := directdebit.Of(s.engine).DebitRunByID(c.Request().Context(), staffpage.StaffUserOf(c).OrganisationID, id); lerr == nil {
				switch d.Run.Status {
				case payment.DebitRunSent:
					return s.StaffErrorPage(c, http.StatusConflict, staffpage.StaffDebitTextIn(c).IsSent)
				case payment.DebitRunCancelled:
					return s.StaffErrorPage(c, http.StatusConflict, staffpage.StaffDebitTextIn(c).IsCancelled)
				}
			}
		}
	}
	return s.StaffEngineError(c, err)
}
