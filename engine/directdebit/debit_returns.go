package directdebit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
	"portal/engine/message"
	"portal/engine/payment"
)

// Returned direct debits (issue 29, "Returns and refunds"): a debit the
// club collected comes back in its camt.053/054/052 statement (the
// debtor's bank refused it, or the member asked their bank for a refund).
// The statement import (ImportStatement) takes it back here: the debit is
// returned, its payment attempt fails with the reason in words, the order
// is unpaid again (and not due for collection until the member confirms it
// again on the pay link), its memberships wait for payment again, the
// member is told in their language, and the treasurer sees it among the
// payments needing attention. A club's bank fee for the return is added to
// the order; AC04, AC06 and MD01 end the mandate.

// KindDebitReturned is the outbox message telling the member that their
// direct debit came back, why, what they owe now and where to pay.
const KindDebitReturned engine.MessageKind = "debit_returned"

// DebitReturnEvent is the payment event type of a returned debit (the
// registration's history words it).
const DebitReturnEvent = "direct_debit.return"

// DebitReturnFeeKind is the order line kind of a club's return fee.
const DebitReturnFeeKind engine.LineKind = "DEBIT_RETURN_FEE"

// ReturnOutcome is what the import made of a returned debit.
type ReturnOutcome string

// The outcomes of a returned debit in a statement import.
const (
	// ReturnApplied: the debit was taken back (or, in a dry run, would be).
	ReturnApplied ReturnOutcome = "returned"
	// ReturnUnknown: no debit of the importing club has the end-to-end id;
	// nothing changed.
	ReturnUnknown ReturnOutcome = "unknown"
	// ReturnMismatch: the amount or currency differs from the debit's, or
	// the debit was never sent (its run was cancelled): recorded on the
	// payment for staff, nothing reversed.
	ReturnMismatch ReturnOutcome = "problem"
)

// ReturnLine is the import's word on one returned debit.
type ReturnLine struct {
	Return  banking.Return
	Outcome ReturnOutcome
	// Reason is what happened, in English words, for the staff page and
	// the command line.
	Reason string
	// OrderID and RegistrationID are the order and registration of the
	// debit (0 when unknown).
	OrderID, RegistrationID int64
	// Reversed: the order was paid and is unpaid again, its memberships
	// pending payment. A debit returned before its run was marked sent
	// only fails its attempt: the order was unpaid still.
	Reversed bool
	// MandateEnded: the reason code ended the mandate (banking.EndsMandate).
	MandateEnded bool
	// FeeMinor is the club's return fee added to the order (0: none).
	FeeMinor int64
	// Err is why the return could not be applied (the rest of the import
	// goes on; importing the statement again retries it).
	Err error
}

// DebitReturnPayload is the payload of a KindDebitReturned message.
type DebitReturnPayload struct {
	OrderID int64 `json:"orderId"`
	DebitID int64 `json:"debitId"`
	// ReasonCode is the bank's return reason (banking.ReturnReasonText).
	ReasonCode    string `json:"reasonCode"`
	ReturnedMinor int64  `json:"returnedMinor"`
	FeeMinor      int64  `json:"feeMinor"`
	MandateEnded  bool   `json:"mandateEnded"`
	// Link is the order's stable pay link when the return was applied.
	Link string `json:"link"`
}

// DebitReturnMessage is what a KindDebitReturned message says. Due is
// false when the order was paid or cancelled since (nothing is sent).
type DebitReturnMessage struct {
	message.UnpaidReminder
	DebitReturnPayload
}

// LoadDebitReturnMessage gathers a KindDebitReturned message: the order
// as it is now (its total is what the member owes), its persons and
// recipients and the member's language.
func LoadDebitReturnMessage(ctx context.Context, db bun.IDB, p DebitReturnPayload) (*DebitReturnMessage, error) {
	r, err := message.LoadUnpaidReminder(ctx, db, message.UnpaidReminderPayload{OrderID: p.OrderID})
	if err != nil {
		return nil, err
	}
	return &DebitReturnMessage{UnpaidReminder: *r, DebitReturnPayload: p}, nil
}

// returnsTo are the statement's returns booked to account (compared
// without spaces and case, as credits are).
func returnsTo(st banking.Statement, account string) []banking.Return {
	compact := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, " ", "")) }
	var out []banking.Return
	for _, r := range st.Returns {
		if compact(r.Account) == compact(account) {
			out = append(out, r)
		}
	}
	return out
}

// ImportReturns applies the statement's returned debits to the account,
// each in its own transaction, and says what became of each. A return
// applied by an earlier import (the debit is returned already, whichever
// statement carried it: camt.054 and camt.053 overlap) is counted in
// already and left out; otherAccounts counts the returns of other
// accounts in the statement.
func (s *Service) ImportReturns(ctx context.Context, st banking.Statement, opt engine.StatementOptions) (lines []ReturnLine, otherAccounts, already int) {
	mine := returnsTo(st, string(opt.Account))
	otherAccounts = len(st.Returns) - len(mine)
	for _, r := range mine {
		line, applied := s.applyReturn(ctx, st, opt, r)
		if applied {
			already++
			continue
		}
		if line.Err != nil {
			s.Log.ErrorContext(ctx, "returned direct debit could not be applied", "endToEnd", r.EndToEndID, "err", line.Err)
		}
		lines = append(lines, line)
	}
	return lines, otherAccounts, already
}

// errReturnApplied ends a return's transaction that found it applied
// before (rolled back: nothing written).
var errReturnApplied = errors.New("return applied before")

// applyReturn takes one returned debit back; already is true when an
// earlier import did.
//
// The debit is found by its end-to-end id among the importing club's
// debits (for the shared account, among those of the clubs without an
// account of their own; more than one is ambiguous, so unknown). A debit
// still in a run not marked sent is taken back too: the bank executed the
// file the club handed it anyway, so the money came and went; marking the
// run sent later leaves a returned debit alone. A debit of a cancelled run
// was never collected by the portal's account of things: recorded as a
// problem, nothing changed.
func (s *Service) applyReturn(ctx context.Context, st banking.Statement, opt engine.StatementOptions, r banking.Return) (line ReturnLine, already bool) {
	line = ReturnLine{Return: r}
	words := banking.ReturnReasonText(r.ReasonCode, "en")
	debit, err := s.debitOfReturn(ctx, opt.Organisation, r.EndToEndID)
	if err != nil {
		line.Err = err
		return line, false
	}
	if debit == nil {
		line.Outcome = ReturnUnknown
		line.Reason = "unknown direct debit return " + r.EndToEndID
		if r.EndToEndID == "" {
			line.Reason = "unknown direct debit return (the bank gives no end-to-end id)"
		}
		return line, false
	}
	line.OrderID = debit.OrderID
	line.Outcome = ReturnApplied
	problem := ""
	switch {
	case debit.Status == payment.DebitReturned:
		return line, true
	case debit.Status == payment.DebitCancelled:
		problem = fmt.Sprintf("direct debit %s returned (%s), but its collection run was cancelled: not reversed; check with the bank",
			r.EndToEndID, words)
	case r.AmountMinor != debit.AmountMinor || !strings.EqualFold(r.Currency, debit.Currency):
		problem = fmt.Sprintf("direct debit %s returned with %s, but %s was collected (%s): not reversed; check with the bank",
			r.EndToEndID, engine.FormatMoney(r.AmountMinor, strings.ToUpper(r.Currency)), engine.FormatMoney(debit.AmountMinor, debit.Currency), words)
	}
	if problem != "" {
		line.Outcome, line.Reason = ReturnMismatch, problem
	}
	if opt.DryRun {
		if problem == "" {
			line.Reason = "would be returned: " + words
		}
		return line, false
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if problem != "" {
			return s.recordReturnProblem(ctx, tx, st, opt, r, debit, problem, &line)
		}
		return s.takeBackDebit(ctx, tx, st, opt, r, debit, &line)
	})
	switch {
	case errors.Is(err, errReturnApplied):
		return line, true
	case err != nil:
		// Rolled back: nothing of it happened.
		line.Err, line.Reversed, line.MandateEnded, line.FeeMinor = err, false, false, 0
	}
	return line, false
}

// debitOfReturn finds the debit a return names by its end-to-end id: the
// importing club's, or, for the shared account (orgID 0), the one of the
// clubs without an account of their own; nil when there is none or, on
// the shared account, more than one.
func (s *Service) debitOfReturn(ctx context.Context, orgID int64, endToEndID string) (*payment.Debit, error) {
	if endToEndID == "" {
		return nil, nil //nolint:nilnil // a return without an end-to-end id names no debit
	}
	var debits []payment.Debit
	q := s.DB().NewSelect().Model(&debits).Where("end_to_end_id = ?", endToEndID).Limit(2)
	if orgID != 0 {
		q = q.Where("organisation_id = ?", orgID)
	} else {
		q = q.Where("organisation_id NOT IN (?)", payment.OwnTransferAccounts(s.DB()))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("load the returned debit: %w", err)
	}
	if len(debits) != 1 {
		return nil, nil //nolint:nilnil // unknown (or ambiguous): reported, nothing changed
	}
	return &debits[0], nil
}

// returnEventID identifies a debit's return among the payment events:
// once per debit, whichever statement (or camt.054 advice) carried it.
func returnEventID(debit *payment.Debit) string {
	return fmt.Sprintf("%s:%d", DebitReturnEvent, debit.ID)
}

// returnProblemEventID identifies a return recorded as a problem by the
// return's transaction key (banking.Return.Key): once, whether the
// camt.054 or the camt.053 that repeats it comes first.
func returnProblemEventID(orgID int64, key string) string {
	return fmt.Sprintf("%s-problem:%d:%s", DebitReturnEvent, orgID, key)
}

// returnNote is the record of a return on its payment event: the reason
// in words, the statement and the bank's own words.
func returnNote(st banking.Statement, r banking.Return, words string) string {
	code := r.ReasonCode
	if code == "" {
		code = "no reason code"
	}
	note := fmt.Sprintf("direct debit returned by the bank: %s (%s); statement %s", words, code, st.MessageID)
	if r.BankReference != "" {
		note += ", bank reference " + r.BankReference
	}
	if r.ReasonText != "" {
		note += "; the bank says: " + r.ReasonText
	}
	if r.ChargesMinor > 0 {
		note += "; bank charges " + engine.FormatMoney(r.ChargesMinor, strings.ToUpper(r.Currency))
	}
	return note
}

// recordReturnProblem records a return that cannot be applied as it is on
// the debit's payment, once (by the return's key: a payment event with the
// problem in its note), for staff to settle with the bank.
func (s *Service) recordReturnProblem(ctx context.Context, tx bun.Tx, st banking.Statement, opt engine.StatementOptions, r banking.Return,
	debit *payment.Debit, problem string, line *ReturnLine) error {
	p := new(engine.Payment)
	if err := tx.NewSelect().Model(p).Where("id = ?", debit.PaymentID).Scan(ctx); err != nil {
		return engine.NotFoundOr(err, "payment")
	}
	p, order, err := payment.LockPayment(ctx, tx, p.Reference)
	if err != nil {
		return err
	}
	line.RegistrationID = order.ProcessInstanceID
	id := returnProblemEventID(debit.OrganisationID, r.Key)
	if r.PreviousKey != "" {
		// Recorded before transaction keys, by the key of that time.
		n, err := tx.NewSelect().Model((*engine.PaymentEvent)(nil)).Where("event_id = ?", returnProblemEventID(debit.OrganisationID, r.PreviousKey)).Count(ctx)
		if err != nil {
			return fmt.Errorf("load the return's record: %w", err)
		}
		if n > 0 {
			return errReturnApplied
		}
	}
	amount, currency := r.AmountMinor, strings.ToUpper(r.Currency)
	ev := &engine.PaymentEvent{Provider: p.Provider, EventID: &id, EventType: DebitReturnEvent, Reference: p.Reference, Outcome: engine.OutcomeFailed,
		AmountMinor: &amount, Currency: &currency, Note: returnNote(st, r, banking.ReturnReasonText(r.ReasonCode, "en")) + "; " + problem,
		CreatedAt: s.Clock()}
	inserted, err := payment.RecordPaymentEvent(ctx, tx, ev)
	if err != nil {
		return err
	}
	if !inserted {
		return errReturnApplied
	}
	// On a collected (succeeded) attempt the problem lists it among the
	// payments needing attention. A pending attempt (its run cancelled, or
	// not marked sent yet) keeps none: settle completes nothing for an
	// attempt with a problem, and the next run collects with it.
	if p.Problem == "" && p.Status == engine.PaymentSucceeded {
		p.Problem, p.UpdatedAt = problem, s.Clock()
		if err := payment.UpdatePayment(ctx, tx, p, "problem", "updated_at"); err != nil {
			return err
		}
	}
	s.Log.WarnContext(ctx, "a returned direct debit does not match its debit; nothing reversed (staff to check)",
		"endToEnd", r.EndToEndID, "order", order.ID, "problem", problem)
	if opt.Actor == nil {
		return nil
	}
	instance := order.ProcessInstanceID
	return s.Audit(ctx, tx, *opt.Actor, engine.AuditEntry{OrganisationID: order.OrganisationID, Action: "payment.debit_return",
		TargetType: "registration", TargetID: fmt.Sprint(instance), InstanceID: &instance,
		After: map[string]any{"reference": p.Reference, "endToEndId": r.EndToEndID, "reason": r.ReasonCode, "problem": problem}})
}

// takeBackDebit applies a return that matches its debit, in one
// transaction under the registration's lock (as settle takes it).
func (s *Service) takeBackDebit(ctx context.Context, tx bun.Tx, st banking.Statement, opt engine.StatementOptions, r banking.Return,
	debit *payment.Debit, line *ReturnLine) error {
	var ref string
	if err := tx.NewSelect().Model((*engine.Payment)(nil)).Column("reference").Where("id = ?", debit.PaymentID).Scan(ctx, &ref); err != nil {
		return engine.NotFoundOr(err, "payment")
	}
	p, order, err := payment.LockPayment(ctx, tx, ref)
	if err != nil {
		return err
	}
	line.RegistrationID = order.ProcessInstanceID
	now := s.Clock()
	// Under the lock: the debit as it is now (a concurrent import of the
	// same return waited for this one).
	res, err := tx.NewUpdate().Model((*payment.Debit)(nil)).Set("status = ?", payment.DebitReturned).Set("return_code = ?", r.ReasonCode).
		Set("returned_at = ?", now).Where("id = ? AND status IN (?)", debit.ID, bun.List([]payment.DebitStatus{payment.DebitCollected, payment.DebitInRun})).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark the debit returned: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return errReturnApplied
	}
	words := banking.ReturnReasonText(r.ReasonCode, "en")
	id := returnEventID(debit)
	amount, currency := r.AmountMinor, strings.ToUpper(r.Currency)
	ev := &engine.PaymentEvent{Provider: p.Provider, EventID: &id, EventType: DebitReturnEvent, Reference: p.Reference, Outcome: engine.OutcomeFailed,
		AmountMinor: &amount, Currency: &currency, Note: returnNote(st, r, words), CreatedAt: now}
	inserted, err := payment.RecordPaymentEvent(ctx, tx, ev)
	if err != nil {
		return err
	}
	if !inserted {
		return errReturnApplied
	}
	wasPaid, before := p.Status == engine.PaymentSucceeded, p.Status
	if p.Status == engine.PaymentSucceeded || p.Status == engine.PaymentPending {
		// The one way back from SUCCEEDED: the money went back to the member.
		if err := payment.SettlePayment(ctx, tx, p, engine.PaymentFailed, engine.PaymentConfirmation{}, now); err != nil {
			return err
		}
	}
	if p.RefundStatus == engine.RefundDue {
		// A second payment owed back: the bank gave it back itself.
		p.RefundStatus, p.UpdatedAt = "", now
		if err := payment.UpdatePayment(ctx, tx, p, "refund_status", "updated_at"); err != nil {
			return err
		}
	}
	reason := "direct debit returned by the bank: " + words
	if r.ReasonCode != "" {
		reason = fmt.Sprintf("direct debit returned by the bank (%s): %s", r.ReasonCode, words)
	}
	if err := engine.EmitPaymentFailed(ctx, tx, p, order, engine.OutcomeFailed, reason, now); err != nil {
		return err
	}
	// The order owes the money again if this debit paid it: paid by it
	// (no other attempt succeeded), or still unpaid (a run not marked sent).
	owing, orderBefore := false, order.Status
	switch order.Status {
	case engine.OrderPaid:
		other, err := tx.NewSelect().Model((*engine.Payment)(nil)).
			Where("order_id = ? AND id <> ? AND status = ? AND refund_status = ''", order.ID, p.ID, engine.PaymentSucceeded).Exists(ctx)
		if err != nil {
			return fmt.Errorf("look for another payment of the order: %w", err)
		}
		if !other && wasPaid {
			if err := s.reverseOrder(ctx, tx, order, now); err != nil {
				return err
			}
			line.Reversed, owing = true, true
		}
	case engine.OrderUnpaid:
		if _, err := tx.NewUpdate().Model((*engine.Order)(nil)).Set("debit_due_on = NULL").Where("id = ?", order.ID).Exec(ctx); err != nil {
			return fmt.Errorf("clear the due date: %w", err)
		}
		order.DebitDueOn, owing = nil, true
	}
	if banking.EndsMandate(r.ReasonCode) {
		res, err := tx.NewUpdate().Model((*DebitMandate)(nil)).Set("revoked_at = ?", now).
			Set("end_reason = ?", MandateEndReturnPrefix+strings.ToUpper(r.ReasonCode)).
			Where("id = ? AND revoked_at IS NULL", debit.MandateID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("end the mandate: %w", err)
		}
		n, _ := res.RowsAffected()
		line.MandateEnded = n == 1
	}
	if owing {
		if err := s.addReturnFee(ctx, tx, order, debit, r, line); err != nil {
			return err
		}
		if err := s.queueReturnMessage(ctx, tx, order, debit, r, line, now); err != nil {
			return err
		}
	}
	line.Reason = "returned: " + words
	if opt.Actor == nil {
		return nil
	}
	// The order as the return left it: the entry says the change in
	// words ("Paid → Unpaid"), as a capture's does.
	after, err := store.LoadOrder(ctx, tx, order.ID)
	if err != nil {
		return err
	}
	instance := order.ProcessInstanceID
	changed := map[string]any{"reference": p.Reference, "endToEndId": r.EndToEndID, "reason": r.ReasonCode, "words": words,
		"amount": engine.FormatMoney(r.AmountMinor, currency), "payment_status": string(p.Status), "order_status": string(after.Status),
		"mandateEnded": line.MandateEnded}
	if line.FeeMinor > 0 {
		changed["fee"] = engine.FormatMoney(line.FeeMinor, order.Currency)
	}
	return s.Audit(ctx, tx, *opt.Actor, engine.AuditEntry{OrganisationID: order.OrganisationID, Action: "payment.debit_return",
		TargetType: "registration", TargetID: fmt.Sprint(instance), InstanceID: &instance,
		Before: map[string]any{"payment_status": string(before), "order_status": string(orderBefore)}, After: changed})
}

// reverseOrder is activate undone for an order whose money went back: the
// order unpaid again and not due for collection, its memberships pending
// payment, its registration awaiting payment (reopenInstance).
func (s *Service) reverseOrder(ctx context.Context, tx bun.Tx, order *engine.Order, now time.Time) error {
	if err := store.MarkOrderUnpaid(ctx, tx, order.ID); err != nil {
		return err
	}
	order.Status, order.PaidAt, order.DebitDueOn = engine.OrderUnpaid, nil, nil
	if _, err := store.SuspendActiveMemberships(ctx, tx, order.ProcessInstanceID); err != nil {
		return err
	}
	reopened, err := store.ReopenInstance(ctx, tx, order.ProcessInstanceID, now)
	if err != nil {
		return err
	}
	if !reopened {
		s.Log.WarnContext(ctx, "a returned debit's registration stays COMPLETED: the household has another open registration of the period",
			"registration", order.ProcessInstanceID, "order", order.ID)
	}
	return nil
}

// returnFeeTexts describe the return fee line in the member's language.
var returnFeeTexts = map[string]string{
	"en": "Bank fee for the returned direct debit",
	"de": "Bankgebühr für die zurückgegebene Lastschrift",
	"fr": "Frais bancaires du prélèvement rejeté",
}

// addReturnFee adds the club's return fee (payment settings) to the
// order as a line of its own, raising the total: the next attempt, made
// from the total, asks for the amount and the fee.
func (s *Service) addReturnFee(ctx context.Context, tx bun.Tx, order *engine.Order, debit *payment.Debit, r banking.Return, line *ReturnLine) error {
	ps, err := payment.LoadPaymentSettings(ctx, tx, order.OrganisationID)
	if err != nil {
		return err
	}
	if ps.DebitReturnFeeMinor <= 0 {
		return nil
	}
	language, err := s.memberLanguageOf(ctx, tx, order)
	if err != nil {
		return err
	}
	text, ok := returnFeeTexts[language]
	if !ok {
		text = returnFeeTexts["en"]
	}
	if code := strings.TrimSpace(r.ReasonCode); code != "" {
		text += " (" + code + ")"
	}
	if err := store.AddOrderLine(ctx, tx, order, engine.OrderLine{Kind: DebitReturnFeeKind, Code: "return:" + debit.EndToEndID, Description: text,
		AmountMinor: ps.DebitReturnFeeMinor, Currency: order.Currency}); err != nil {
		return err
	}
	line.FeeMinor = ps.DebitReturnFeeMinor
	return nil
}

// memberLanguageOf is the language of an order's registration, else its
// organisation's default (the language code alone).
func (s *Service) memberLanguageOf(ctx context.Context, db bun.IDB, order *engine.Order) (string, error) {
	language, err := message.RegistrationLanguage(ctx, db, order.ProcessInstanceID)
	if err != nil || language != "" {
		return language, err
	}
	org, err := engine.LoadOrganisation(ctx, db, order.OrganisationID)
	if err != nil {
		return "", err
	}
	language, _, _ = strings.Cut(org.DefaultLanguage, "-")
	return language, nil
}

// queueReturnMessage queues the member's message about the return, once
// per debit; its key names the order, so the open payments list shows it
// as the order's last message.
func (s *Service) queueReturnMessage(ctx context.Context, tx bun.Tx, order *engine.Order, debit *payment.Debit, r banking.Return, line *ReturnLine, now time.Time) error {
	payload, err := json.Marshal(DebitReturnPayload{OrderID: order.ID, DebitID: debit.ID, ReasonCode: strings.ToUpper(r.ReasonCode),
		ReturnedMinor: r.AmountMinor, FeeMinor: line.FeeMinor, MandateEnded: line.MandateEnded, Link: payment.Of(s.Service).PayLink(ctx, tx, order)})
	if err != nil {
		return fmt.Errorf("return message payload: %w", err)
	}
	return store.QueueMessage(ctx, tx, &engine.OutboxMessage{Kind: KindDebitReturned, DedupKey: fmt.Sprintf("%s:order:%d:debit:%d", KindDebitReturned, order.ID, debit.ID),
		Payload: string(payload), CreatedAt: now})
}
