package payments

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/banktransfer"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/handlers/staff/registrations"
	"portal/handlers/staff/staffpage"
	"portal/views/staffview"
)

// staffAttentionLimit bounds the attention list.
const staffAttentionLimit = 200

// StaffPaymentsPage answers GET /staff/payments: the payment attempts
// needing attention, and for treasurers the bank statement upload.
func (s *Server) StaffPaymentsPage(c echo.Context) error {
	rq := staffpage.RequestOf(c)
	account := banking.IBAN("")
	if rq.User.Role.AtLeast(staff.RoleTreasurer) {
		account = s.bankAccountOf(c.Request().Context(), rq.OrganisationID())
	}
	return s.renderStaffPayments(c, rq, http.StatusOK, "", account)
}

// renderStaffPayments renders the payments page of the request rq, with a
// problem of the uploaded file when uploadError is not "". account is the
// statement's account (bankAccountOf), which its caller looked up for a
// treasurer ("" for anyone else, or when there is none).
func (s *Server) renderStaffPayments(c echo.Context, rq *staffpage.Request, status int, uploadError string, account banking.IBAN) error {
	ctx, u := c.Request().Context(), rq.User
	list, err := staff.Of(s.engine).PaymentsNeedingAttention(ctx, staff.AttentionQuery{OrganisationID: u.OrganisationID, Limit: staffAttentionLimit})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	credits, err := bankstatement.Of(s.engine).BankCredits(ctx, bankstatement.CreditQuery{OrganisationID: u.OrganisationID, Limit: staffAttentionLimit})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	treasurer := u.Role.AtLeast(staff.RoleTreasurer)
	m := staffview.PaymentsModel{Chrome: s.StaffChrome(c, staffpage.StaffOpsTextIn(c).PaymentsTitle), Error: uploadError,
		DebitsURL: rq.StaffPath(server.StaffDebitsPath)}
	for _, a := range list {
		m.Attention = append(m.Attention, s.staffAttentionRow(c, rq, a))
	}
	for _, cr := range credits {
		m.Credits = append(m.Credits, s.staffStoredCredit(c, rq, cr, treasurer))
	}
	if treasurer {
		if account == "" {
			m.NoBank = true
		} else {
			m.UploadURL = rq.StaffPath(server.StaffStatementPath)
		}
	}
	return staffpage.StaffRender(c, status, staffview.Payments(m))
}

// staffAttentionRow prints one attempt needing attention: whose it is
// (the household, linked to its registration), why, and what to do.
func (s *Server) staffAttentionRow(c echo.Context, rq *staffpage.Request, a staff.AttentionPayment) staffview.AttentionRow {
	p := a.Payment
	t := staffpage.StaffOpsTextIn(c)
	reg := strconv.FormatInt(a.Order.ProcessInstanceID, 10)
	row := staffview.AttentionRow{Amount: staffpage.StaffMoney(c, p.AmountMinor, p.Currency), UserKey: a.Order.UserKey,
		Created: staffpage.StaffDateTime(c, p.CreatedAt), Reference: p.Reference,
		Household: strings.Join(a.Household, ", "), Registration: fmt.Sprintf(staffview.ListTextIn(c.Request().Context()).OpenRegistration, reg),
		DetailURL: rq.StaffPath(registrations.RegistrationPath(a.Order.ProcessInstanceID))}
	if row.Household == "" {
		row.Household = staffview.ListTextIn(c.Request().Context()).NoPersonsYet
	}
	if p.Provider == payment.BankTransferProvider && p.ProviderID != nil {
		row.Reference = banking.Reference(*p.ProviderID).String()
	}
	switch a.Reason {
	case staff.AttentionProblem:
		row.Reason, row.Detail, row.Action = t.AttentionProblem, p.Problem, t.ActionProblem
	case staff.AttentionSecondPayment:
		row.Reason, row.Action = t.AttentionSecond, t.ActionSecondByProvider
		if a.RefundByHand {
			row.Action = t.ActionSecondByHand
		}
	case staff.AttentionDebitReturned:
		row.Reason, row.Detail, row.Action = t.AttentionReturned, banking.ReturnReasonText(a.ReturnCode, server.LangOf(c).Code), t.ActionReturned
		if a.ReturnCode != "" {
			row.Detail += " (" + a.ReturnCode + ")"
		}
	case staff.AttentionDebitLeftOut:
		row.Reason, row.Detail, row.Action = t.AttentionLeftOut, a.Order.DebitProblem, t.ActionLeftOut
	default:
		row.Reason, row.Action = t.AttentionPending, t.ActionPending
	}
	return row
}

// bankAccountOf is the organisation's own IBAN its members transfer to,
// "" when its payments are not bank transfers to an account of its own.
// The portal's shared account (PORTAL_BANK_IBAN) takes several clubs'
// transfers: one club's staff importing its statement would see the
// others' payers and could match their money to its own orders by amount,
// so that statement is the operator's to import (portal payments import).
func (s *Server) bankAccountOf(ctx context.Context, orgID int64) banking.IBAN {
	ps, err := settings.Of(s.engine).PaymentSettings(ctx, orgID)
	if err != nil || ps.BankIBAN == "" {
		return ""
	}
	if ps.DebitCreditorID != "" {
		// The club collects direct debits to its own account: its
		// statement carries their returns (debit_returns.go).
		if iban, err := banking.ParseIBAN(ps.BankIBAN); err == nil {
			return iban
		}
	}
	bt, ok := payment.Of(s.engine).ProviderFor(orgID).(*banktransfer.Provider)
	if !ok {
		return ""
	}
	return bt.Creditor().IBAN
}

// StaffImportStatement answers POST /staff/payments/statement. A chosen
// file is matched without capturing anything, and the proposed matches
// shown with a form that posts the same file back with capture=1; that
// post captures them (each credit once, by the bank's id: confirming
// twice captures nothing more) and shows what became of every credit.
func (s *Server) StaffImportStatement(c echo.Context) error {
	rq := staffpage.RequestOf(c)
	u := rq.User
	account := s.bankAccountOf(c.Request().Context(), u.OrganisationID)
	if account == "" {
		return s.StaffErrorPage(c, http.StatusConflict, staffpage.StaffOpsTextIn(c).StatementNoBank)
	}
	data, fromCopy, err := staffpage.StaffUpload(c, "statement")
	if status, problem, ok := staffpage.UploadProblem(err, staffpage.StaffOpsTextIn(c).StatementTooLarge, staffpage.StaffOpsTextIn(c).StatementMissing); ok {
		return s.renderStaffPayments(c, rq, status, problem, account)
	} else if err != nil {
		return err
	}
	st, err := banking.ParseStatement(bytes.NewReader(data))
	if err != nil {
		return s.renderStaffPayments(c, rq, http.StatusUnprocessableEntity, staffpage.StaffOpsTextIn(c).StatementInvalid+": "+err.Error()+".", account)
	}
	capture := fromCopy && c.FormValue("capture") == "1"
	actor := u.Actor()
	rep, err := bankstatement.Of(s.engine).ImportStatement(c.Request().Context(), st, engine.StatementOptions{Account: account, DryRun: !capture,
		Organisation: u.OrganisationID, Actor: &actor})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	title := staffpage.StaffOpsTextIn(c).PreviewTitle
	if capture {
		title = staffpage.StaffOpsTextIn(c).ResultTitle
	}
	m := staffview.StatementModel{Chrome: s.StaffChrome(c, title), Preview: !capture,
		CaptureURL: rq.StaffPath(server.StaffStatementPath), BackURL: rq.StaffPath("/payments")}
	if !capture {
		m.Statement = staffpage.StaffUploadCopy(data)
	}
	if rep.AlreadyImported > 0 {
		m.Notes = append(m.Notes, strconv.Itoa(rep.AlreadyImported)+" "+staffpage.StaffOpsTextIn(c).AlreadyImported)
	}
	if rep.ReturnsBefore > 0 {
		m.Notes = append(m.Notes, strconv.Itoa(rep.ReturnsBefore)+" "+staffpage.StaffOpsTextIn(c).ReturnsBefore)
	}
	if rep.OtherAccounts > 0 {
		m.Notes = append(m.Notes, strconv.Itoa(rep.OtherAccounts)+" "+staffpage.StaffOpsTextIn(c).OtherAccounts)
	}
	for _, l := range rep.Lines {
		row, matched := staffCreditRow(c, l, capture)
		if matched {
			m.Matched = append(m.Matched, row)
		} else {
			m.Unmatched = append(m.Unmatched, row)
		}
	}
	for _, l := range rep.Returns {
		row, matched := staffReturnRow(c, l, capture)
		if matched {
			m.Matched = append(m.Matched, row)
		} else {
			m.Unmatched = append(m.Unmatched, row)
		}
	}
	return staffpage.StaffRender(c, http.StatusOK, staffview.Statement(m))
}

// staffReturnRow prints one returned direct debit of an import, and
// whether it was matched to a debit (taken back); an unknown one or one
// that does not match its debit is a problem, as an unmatched credit is.
func staffReturnRow(c echo.Context, l directdebit.ReturnLine, captured bool) (staffview.CreditRow, bool) {
	r := l.Return
	t := staffpage.StaffOpsTextIn(c)
	row := staffview.CreditRow{Amount: staffpage.StaffMoney(c, r.AmountMinor, r.Currency), Reference: r.EndToEndID, Kind: "problem"}
	date := r.BookingDate
	if date.IsZero() {
		date = r.ValueDate
	}
	if !date.IsZero() {
		row.Date = staffpage.StaffDate(c, date)
	}
	words := banking.ReturnReasonText(r.ReasonCode, server.LangOf(c).Code)
	if r.ReasonCode != "" {
		words += " (" + r.ReasonCode + ")"
	}
	switch {
	case l.Err != nil:
		row.Outcome, row.Result, row.Kind = t.OutcomeReturned, t.LineFailed, "error"
		if e, ok := engine.AsError(l.Err); ok {
			row.Result += ": " + e.Message
		}
		return row, true
	case l.Outcome == directdebit.ReturnUnknown:
		row.Outcome, row.Result = t.OutcomeReturnUnknown, l.Reason
		return row, false
	case l.Outcome == directdebit.ReturnMismatch:
		row.Outcome, row.Result = t.OutcomeReturnProblem, l.Reason
		return row, false
	}
	row.Outcome, row.Kind = t.OutcomeReturned+": "+words, "ok"
	row.Result = t.LineWillReturn
	if captured {
		row.Result = t.LineReturned
		if l.FeeMinor > 0 {
			row.Result += " " + t.LineReturnFee + " " + staffpage.StaffMoney(c, l.FeeMinor, r.Currency) + "."
		}
		if l.MandateEnded {
			row.Result += " " + t.LineMandateEnded
		}
	}
	return row, true
}

// staffCreditOutcomes name the match outcomes; those with a payment are
// the proposed matches.
var staffCreditOutcomes = map[banking.Outcome]struct {
	text     func(c echo.Context) string
	matched  bool
	complete bool // an exact capture completes the registration
}{
	banking.OutcomeExact:     {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeExact }, true, true},
	banking.OutcomeByAmount:  {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeByAmount }, true, true},
	banking.OutcomePartial:   {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomePartial }, true, false},
	banking.OutcomeExcess:    {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeExcess }, true, false},
	banking.OutcomeCurrency:  {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeCurrency }, true, false},
	banking.OutcomeDuplicate: {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeDuplicate }, false, false},
	banking.OutcomeUnknown:   {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeUnknown }, false, false},
	banking.OutcomeSecond:    {func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).OutcomeSecond }, true, false},
}

// staffCreditRow prints one credit of an import, and whether it was
// matched to a payment.
func staffCreditRow(c echo.Context, l bankstatement.StatementLine, captured bool) (staffview.CreditRow, bool) {
	cr := l.Credit
	date := cr.BookingDate
	if date.IsZero() {
		date = cr.ValueDate
	}
	row := staffview.CreditRow{Amount: staffpage.StaffMoney(c, cr.AmountMinor, cr.Currency), From: cr.DebtorName, Kind: "ok"}
	if !date.IsZero() {
		row.Date = staffpage.StaffDate(c, date)
	}
	row.Reference = cr.Unstructured
	if len(cr.References) > 0 {
		row.Reference = cr.References[0]
	}
	if l.RF != "" {
		row.Reference = l.RF.String()
	}
	o, ok := staffCreditOutcomes[l.Outcome]
	if !ok || !o.matched {
		row.Outcome, row.Result, row.Kind = string(l.Outcome), l.Reason, "problem"
		if ok {
			row.Outcome = o.text(c)
		}
		if l.Kept {
			row.Result += ". " + staffpage.StaffOpsTextIn(c).LineKept
		}
		return row, false
	}
	row.Outcome = o.text(c)
	switch {
	case !captured && l.Outcome == banking.OutcomeSecond:
		row.Result, row.Kind = staffpage.StaffOpsTextIn(c).LineWillOwe, "problem"
	case !captured && o.complete:
		row.Result = staffpage.StaffOpsTextIn(c).LineWillComplete
	case !captured && l.Outcome == banking.OutcomePartial:
		// An ordinary part payment, not a problem: the rest stays owed.
		row.Result = staffpage.StaffOpsTextIn(c).LineWillPart
	case !captured:
		row.Result, row.Kind = staffpage.StaffOpsTextIn(c).LineWillRecord, "problem"
	case l.Err != nil:
		row.Result, row.Kind = staffpage.StaffOpsTextIn(c).LineFailed, "error"
		if e, ok := engine.AsError(l.Err); ok {
			row.Result += ": " + e.Message
		}
	case l.SecondCredit:
		row.Result, row.Kind = staffpage.StaffOpsTextIn(c).LineOwed, "problem"
	case l.Completed:
		row.Result = staffpage.StaffOpsTextIn(c).LineCompleted
	case l.Captured && l.Outcome == banking.OutcomePartial:
		row.Result = staffpage.StaffOpsTextIn(c).LinePart
	case l.Captured:
		row.Result, row.Kind = staffpage.StaffOpsTextIn(c).LineCaptured, "problem"
	default:
		row.Result = l.Reason
	}
	return row, true
}

// staffStoredCredit prints a credit an import kept; resolvable says the
// role may resolve it.
func (s *Server) staffStoredCredit(c echo.Context, rq *staffpage.Request, cr bankstatement.BankCredit, resolvable bool) staffview.StoredCredit {
	key := strconv.FormatInt(cr.ID, 10)
	row := staffview.StoredCredit{Key: key, Amount: staffpage.StaffMoney(c, cr.AmountMinor, cr.Currency), From: cr.DebtorName,
		IBAN: cr.DebtorIBAN, Reference: cr.Reference, Remittance: cr.Remittance, Reason: cr.Reason, StateKey: string(cr.State),
		State: creditStateLabel(c, cr.State), Note: cr.Note}
	if cr.BookedOn != nil {
		row.Date = staffpage.StaffDate(c, *cr.BookedOn)
	}
	if cr.ResolvedAt != nil {
		row.Resolved = staffpage.StaffOpsTextIn(c).CreditBy + " " + cr.ResolvedBy + ", " + staffpage.StaffDateTime(c, *cr.ResolvedAt)
	}
	if cr.PaymentReference != nil {
		row.Payment = *cr.PaymentReference
		if cr.RegistrationID != 0 {
			row.PaymentURL = rq.StaffPath(registrations.RegistrationPath(cr.RegistrationID))
		}
	}
	if resolvable && cr.State == bankstatement.CreditUnmatched {
		row.ResolveURL = rq.StaffPath(server.StaffCreditsPath + "/" + key + "/resolve")
	}
	return row
}

// creditStateLabel is how the payments page names a credit's state.
func creditStateLabel(c echo.Context, st bankstatement.CreditState) string {
	switch st {
	case bankstatement.CreditAssigned:
		return staffpage.StaffOpsTextIn(c).CreditStateAssigned
	case bankstatement.CreditReturned:
		return staffpage.StaffOpsTextIn(c).CreditStateReturned
	case bankstatement.CreditIgnored:
		return staffpage.StaffOpsTextIn(c).CreditStateIgnored
	}
	return staffpage.StaffOpsTextIn(c).CreditStateUnmatched
}

// The payments page's flashes after resolving a credit.
const (
	flashCreditAssigned        = "credit-assigned"
	flashCreditAssignedProblem = "credit-assigned-problem"
	flashCreditClosed          = "credit-closed"
	flashCreditAlready         = "credit-already"
)

func init() {
	staffpage.StaffFlashes[flashCreditAssigned] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).CreditAssigned }
	staffpage.StaffFlashes[flashCreditAssignedProblem] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).CreditAssignedProblem }
	staffpage.StaffFlashes[flashCreditClosed] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).CreditClosed }
	staffpage.StaffFlashes[flashCreditAlready] = func(c echo.Context) string { return staffpage.StaffOpsTextIn(c).CreditAlready }
}

// StaffResolveCredit answers POST /staff/payments/credits/{id}/resolve
// (resolution=assigned|returned|ignored, payment, note), after asking: an
// assigned credit is captured for the registration or payment named, a
// returned or ignored one closed with the note. Posted twice (the back
// button, a double click), the second changes nothing and says so.
func (s *Server) StaffResolveCredit(c echo.Context) error {
	u := staffpage.StaffUserOf(c)
	id, ok := server.PathID(c, "id")
	if !ok {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	r := bankstatement.CreditResolution{State: bankstatement.CreditState(c.FormValue("resolution")), Payment: strings.TrimSpace(c.FormValue("payment")),
		Note: strings.TrimSpace(c.FormValue("note"))}
	detail := staffpage.StaffOpsTextIn(c).CreditCloseDetail
	switch {
	case r.State == bankstatement.CreditAssigned && r.Payment == "":
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffOpsTextIn(c).CreditNoPayment)
	case r.State == bankstatement.CreditAssigned:
		detail = staffpage.StaffOpsTextIn(c).CreditAssignDetail
	case r.State != bankstatement.CreditReturned && r.State != bankstatement.CreditIgnored:
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffOpsTextIn(c).CreditNoChoice)
	case r.Note == "":
		return s.StaffErrorPage(c, http.StatusUnprocessableEntity, staffpage.StaffOpsTextIn(c).CreditNoNote)
	}
	back := staffpage.RequestOf(c).StaffPath("/payments")
	credits, err := bankstatement.Of(s.engine).BankCredits(c.Request().Context(), bankstatement.CreditQuery{OrganisationID: u.OrganisationID, Limit: staffAttentionLimit})
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	question := ""
	for _, cr := range credits {
		if cr.ID == id {
			question = fmt.Sprintf(staffpage.StaffOpsTextIn(c).CreditResolveQuestion, staffpage.StaffMoney(c, cr.AmountMinor, cr.Currency), cmp.Or(cr.DebtorName, "?"))
		}
	}
	if question == "" {
		return s.StaffErrorPage(c, http.StatusNotFound, staffpage.StaffTextIn(c).NotFound)
	}
	if ok, err := s.StaffConfirmed(c, question, detail, back); !ok {
		return err
	}
	res, err := bankstatement.Of(s.engine).ResolveCredit(c.Request().Context(), u.Actor(), u.OrganisationID, id, r)
	if err != nil {
		return s.StaffEngineError(c, err)
	}
	done := flashCreditClosed
	switch {
	case res.Replayed:
		done = flashCreditAlready
	case res.Capture != nil && (res.Capture.Problem != "" || res.Capture.Stale):
		done = flashCreditAssignedProblem
	case res.Capture != nil:
		done = flashCreditAssigned
	}
	return c.Redirect(http.StatusSeeOther, back+"?done="+done)
}
