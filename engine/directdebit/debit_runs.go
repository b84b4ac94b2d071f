package directdebit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
	"portal/engine/jobs"
	"portal/engine/payment"
)

// Collection runs (issue 29): the treasurer gathers a club's due direct
// debits into one pain.008 file for the club's bank, downloads it (again,
// byte for byte), cancels it as a whole while it is not sent, and marks it
// sent, which settles its payments through the same settlement as every
// other method. A debit is in one live run at most (the partial unique
// index debits_one_live_per_order).

// DefaultCollectionHorizon is how far ahead a run gathers debits when no
// date is given: banks take SEPA Core files up to 14 calendar days before
// the requested collection date, which the file states per debit.
const DefaultCollectionHorizon = 14 * 24 * time.Hour

// DefaultCollectionUntil is the last due date a run prepared at now
// without a date gathers: the first TARGET business day on or after
// DefaultCollectionHorizon from today. The due dates the portal computes
// are TARGET business days (payment.DebitDueDate), so a debit due on the
// Monday after a horizon that ends on a weekend or a holiday is taken,
// not left for a run that the bank would then get too late: on Sunday
// 6 December 2026 a mandate given that day falls due on Monday the 21st,
// and the run takes it.
func DefaultCollectionUntil(now time.Time) time.Time {
	return banking.NextTARGETBusinessDay(payment.DateOf(now.UTC()).AddDate(0, 0, int(DefaultCollectionHorizon/(24*time.Hour))))
}

// ErrNothingDue is the cause of CollectDebits' conflict when no debit is
// due by the date asked: not a failure, which the staff page says in its
// own words (errors.Is).
var ErrNothingDue = errors.New("no direct debit is due")

// ErrNoneCollectable is the cause of CollectDebits' conflict when debits
// are due but none of them can go into a file (each is left out, with
// why, among the payments needing attention): no run is written.
var ErrNoneCollectable = errors.New("no due direct debit can go into a collection file")

// LeftOutDebit is a due debit that a collection run could not put into its
// file (its mandate's account outside the EEA without a BIC, an open
// payment of another method, ...): the run is written without it, and the
// order stays due, among the payments needing attention with Problem,
// until a run takes it or its mandate is given, kept or changed again.
type LeftOutDebit struct {
	OrderID          int64
	OrderReference   string
	RegistrationID   int64
	MandateReference string
	Holder           string
	MaskedIBAN       string
	AmountMinor      int64
	Currency         string
	// Problem says in words why, and what fixes it.
	Problem string
}

// CollectedRun is a run CollectDebits wrote and the due debits it left out.
type CollectedRun struct {
	payment.DebitRun
	LeftOut []LeftOutDebit
}

// CollectRequest asks for a collection run.
type CollectRequest struct {
	OrganisationID int64
	// Until is the last due date gathered; zero: DefaultCollectionUntil of
	// today.
	Until time.Time
	Actor engine.Actor
}

// debitCandidate is an order due for collection with its mandate.
type debitCandidate struct {
	Order   engine.Order
	Mandate DebitMandate
	Period  string
}

// CollectDebits writes the collection run of an organisation: every
// unpaid direct-debit order whose mandate holds and whose due date is on
// or before req.Until and that is in no live run. An order without an
// open attempt gets one first (after a return, the next attempt asks the
// order's total, its return fee included). Nothing due: a conflict error,
// no run. A due debit that cannot go into a file (banking.CheckDirectDebit
// refuses it, or its order has an open payment of another method or
// amount) is left out, with why, and the run is written with the others:
// one bad mandate never blocks the club's collection; when none can go
// in, a conflict error (ErrNoneCollectable) and no run, the debits left
// out recorded all the same. The run, its debits, what was left out and
// the audit entry are written in one transaction; a concurrent run for the
// same orders fails on the unique index and changes nothing.
func (s *Service) CollectDebits(ctx context.Context, req CollectRequest) (_ *CollectedRun, err error) {
	now := s.Clock()
	until := req.Until
	if until.IsZero() {
		until = DefaultCollectionUntil(now)
	}
	until = payment.DateOf(until)
	ps, err := payment.LoadPaymentSettings(ctx, s.DB(), req.OrganisationID)
	if err != nil {
		return nil, err
	}
	if ps.DebitCreditorID == "" {
		return nil, engine.Errorf(engine.CodeConflict, "this club does not collect by direct debit: set its Creditor Identifier first")
	}
	due, err := dueDebits(ctx, s.DB(), req.OrganisationID, until)
	if err != nil {
		return nil, err
	}
	if len(due) == 0 {
		e := engine.Errorf(engine.CodeConflict, "no direct debit is due on or before %s", until.Format(time.DateOnly))
		e.Err = ErrNothingDue
		return nil, e
	}
	// The attempts are made outside the transaction (checkoutFor calls the
	// provider); for direct debit that is the portal's own pay link.
	attempts, err := pendingAttemptsOf(ctx, s.DB(), due)
	if err != nil {
		return nil, err
	}
	for _, d := range due {
		order := d.Order
		p := attempts[order.ID]
		if p == nil || p.ExpiresAt != nil && !p.ExpiresAt.After(now.Add(payment.CheckoutMargin)) {
			// None open (the first run after a return) or one expiring:
			// made as the pay link would make it, for the order's total.
			if err := loadOrderLines(ctx, s.DB(), &order); err != nil {
				return nil, err
			}
			if p, err = payment.Of(s.Service).CheckoutFor(ctx, &order); err != nil {
				return nil, fmt.Errorf("order %d: %w", order.ID, err)
			}
			attempts[order.ID] = p
		}
	}
	org, err := engine.LoadOrganisation(ctx, s.DB(), req.OrganisationID)
	if err != nil {
		return nil, err
	}
	version := ps.DebitFileVersion
	if version == "" {
		version = banking.Pain008V08
	}
	out := &CollectedRun{DebitRun: payment.DebitRun{OrganisationID: req.OrganisationID, FileVersion: version, UntilOn: until,
		Status: payment.DebitRunPrepared, Currency: payment.DirectDebitCurrency, CreatedBy: req.Actor.Name, CreatedAt: now, File: []byte{}}}
	run := &out.DebitRun
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		run.MessageID = "PENDING-" + engine.NewReference("")
		run.DebitCount, run.TotalMinor, run.File, out.LeftOut = 0, 0, []byte{}, nil
		if _, err := tx.NewInsert().Model(run).Exec(ctx); err != nil {
			return fmt.Errorf("store collection run: %w", err)
		}
		run.MessageID = fmt.Sprintf("DD-%d-%d", run.OrganisationID, run.ID)
		file := banking.DirectDebitFile{Version: version, MessageID: run.MessageID, Created: now.UTC().Truncate(time.Second),
			Creditor: banking.DirectDebitCreditor{Name: ps.BankCreditorName, IBAN: ps.BankIBAN, BIC: ps.BankBIC, CreditorID: ps.DebitCreditorID}}
		earliest := banking.NextTARGETBusinessDay(payment.DateOf(now).AddDate(0, 0, 1))
		firstOf := map[int64]bool{}
		debits := make([]payment.Debit, 0, len(due))
		taken := make([]int64, 0, len(due))
		for _, d := range due {
			p := attempts[d.Order.ID]
			m := d.Mandate
			if p.Provider != payment.DirectDebitProvider || p.AmountMinor != d.Order.TotalMinor {
				out.LeftOut = append(out.LeftOut, leftOut(d, "it has an open payment of another method or amount; it is collected once that payment is closed"))
				continue
			}
			first, seen := firstOf[m.ID]
			if !seen {
				first = m.LastCollectedAt == nil
			}
			seq := banking.SequenceRecurring
			if first {
				seq = banking.SequenceFirst
			}
			dueOn := payment.DateOf(*d.Order.DebitDueOn)
			if dueOn.Before(earliest) {
				// Gathered late: the bank cannot collect in the past.
				dueOn = earliest
			}
			debit := payment.Debit{RunID: run.ID, OrganisationID: run.OrganisationID, OrderID: d.Order.ID, PaymentID: p.ID, MandateID: m.ID,
				EndToEndID: debitEndToEndID(p.Reference, run.ID), AmountMinor: p.AmountMinor, Currency: p.Currency, DueOn: dueOn,
				Sequence: seq, Amended: m.PreviousIBAN != "", Status: payment.DebitInRun}
			dd := banking.DirectDebit{EndToEndID: debit.EndToEndID, AmountCents: debit.AmountMinor, Sequence: seq, DueDate: dueOn,
				MandateID: m.Reference, MandateSigned: m.SignedAt, DebtorName: m.Holder, DebtorIBAN: m.IBAN, DebtorBIC: m.BIC,
				RemittanceText: fmt.Sprintf("%s %s, order %d", org.Name, d.Period, d.Order.ID)}
			if debit.Amended {
				dd.Amendment = &banking.MandateAmendment{OriginalDebtorIBAN: m.PreviousIBAN,
					ChangedBank: !banking.SameBank(banking.IBAN(m.PreviousIBAN), banking.IBAN(m.IBAN))}
			}
			if err := banking.CheckDirectDebit(dd); err != nil {
				out.LeftOut = append(out.LeftOut, leftOut(d, debitProblem(err, m)))
				continue
			}
			firstOf[m.ID] = first
			debits = append(debits, debit)
			taken = append(taken, d.Order.ID)
			file.Debits = append(file.Debits, dd)
			run.DebitCount++
			run.TotalMinor += debit.AmountMinor
		}
		if len(debits) == 0 {
			return ErrNoneCollectable // rolls the run back; what was left out is recorded below
		}
		// One statement for the debits; another run taking one of these
		// orders meanwhile breaks the unique index and changes nothing.
		if _, err := tx.NewInsert().Model(&debits).Exec(ctx); err != nil {
			if store.IsUniqueViolation(err) {
				return engine.Errorf(engine.CodeConflict, "another collection run took one of these orders meanwhile; look at the runs again")
			}
			return fmt.Errorf("store debits: %w", err)
		}
		var buf bytes.Buffer
		if err := banking.WriteDirectDebits(&buf, file); err != nil {
			// Every debit was checked: the club's own settings cannot make
			// a valid file. Say which.
			return &engine.Error{Code: engine.CodeConflict, Message: "the collection file cannot be written: " + err.Error(), Err: err}
		}
		run.File = buf.Bytes()
		if _, err := tx.NewUpdate().Model(run).Column("message_id", "debit_count", "total_minor", "file").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store collection run: %w", err)
		}
		if _, err := clearDebitProblem(tx.NewUpdate().Model((*engine.Order)(nil))).
			Where("id IN (?) AND (debit_problem <> '' OR debit_problem_run_id IS NOT NULL)", bun.List(taken)).Exec(ctx); err != nil {
			return fmt.Errorf("clear debits left out before: %w", err)
		}
		if err := recordLeftOut(ctx, tx, out.LeftOut, &run.ID); err != nil {
			return err
		}
		after := map[string]any{"messageId": run.MessageID, "until": until.Format(time.DateOnly), "debits": run.DebitCount,
			"total": engine.FormatMoney(run.TotalMinor, run.Currency), "version": run.FileVersion}
		if len(out.LeftOut) > 0 {
			after["leftOut"] = leftOutAudit(out.LeftOut)
		}
		return s.AppendAudit(ctx, tx, req.Actor, engine.AuditEntry{OrganisationID: run.OrganisationID, Action: "debit_run.create",
			TargetType: "debit_run", TargetID: fmt.Sprint(run.ID), After: after})
	})
	if errors.Is(err, ErrNoneCollectable) && len(out.LeftOut) > 0 {
		return nil, s.noneCollectable(ctx, req, until, out.LeftOut)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// noneCollectable records the debits left out when none of the due ones
// could go into a file (no run was written), audited, and returns the
// conflict that says so.
func (s *Service) noneCollectable(ctx context.Context, req CollectRequest, until time.Time, left []LeftOutDebit) error {
	err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := recordLeftOut(ctx, tx, left, nil); err != nil {
			return err
		}
		return s.AppendAudit(ctx, tx, req.Actor, engine.AuditEntry{OrganisationID: req.OrganisationID, Action: "debit_run.none_collectable",
			TargetType: "organisation", TargetID: fmt.Sprint(req.OrganisationID),
			After: map[string]any{"until": until.Format(time.DateOnly), "leftOut": leftOutAudit(left)}})
	})
	if err != nil {
		return err
	}
	words := make([]string, len(left))
	for i, l := range left {
		words[i] = fmt.Sprintf("order %s (%s): %s", l.OrderReference, l.Holder, l.Problem)
	}
	e := engine.Errorf(engine.CodeConflict, "no direct debit due on or before %s can go into a collection file, so no run was written: %s. Each is listed among the payments needing attention",
		until.Format(time.DateOnly), strings.Join(words, "; "))
	e.Err = ErrNoneCollectable
	return e
}

// leftOut is a candidate left out of a run for problem.
func leftOut(d debitCandidate, problem string) LeftOutDebit {
	return LeftOutDebit{OrderID: d.Order.ID, OrderReference: d.Order.PayReference, RegistrationID: d.Order.ProcessInstanceID,
		MandateReference: d.Mandate.Reference, Holder: d.Mandate.Holder, MaskedIBAN: MaskedIBAN(d.Mandate.IBAN),
		AmountMinor: d.Order.TotalMinor, Currency: d.Order.Currency, Problem: problem}
}

// debitProblem says in words why banking refused a debit under m, and
// what fixes it; the mandate's IBAN appears masked, as on the pages.
func debitProblem(err error, m DebitMandate) string {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	if m.IBAN != "" {
		msg = strings.ReplaceAll(msg, m.IBAN, MaskedIBAN(m.IBAN))
	}
	if errors.Is(err, banking.ErrBICRequired) {
		msg += ": the member gives the bank's BIC by changing the account on the pay link, or staff revoke the mandate"
	} else {
		msg += ": the member gives the mandate again on the pay link, or staff revoke it"
	}
	return "it cannot go into a collection file: " + msg
}

// clearDebitProblem sets an update of orders to forget why a run left
// their debit out: a run took it, or its mandate was given, kept or
// changed, so the next run tries it again.
func clearDebitProblem(q *bun.UpdateQuery) *bun.UpdateQuery {
	return q.Set("debit_problem = ''").Set("debit_problem_run_id = NULL")
}

// recordLeftOut stores on each order left out why, and the run that left
// it out (nil: none was written).
func recordLeftOut(ctx context.Context, tx bun.Tx, left []LeftOutDebit, runID *int64) error {
	for _, l := range left {
		if _, err := tx.NewUpdate().Model((*engine.Order)(nil)).Set("debit_problem = ?", l.Problem).Set("debit_problem_run_id = ?", runID).
			Where("id = ?", l.OrderID).Exec(ctx); err != nil {
			return fmt.Errorf("record a debit left out: %w", err)
		}
	}
	return nil
}

// leftOutAudit is what the audit log keeps of the debits left out.
func leftOutAudit(left []LeftOutDebit) []map[string]any {
	out := make([]map[string]any, len(left))
	for i, l := range left {
		out[i] = map[string]any{"order": l.OrderReference, "mandate": l.MandateReference, "problem": l.Problem}
	}
	return out
}

// debitEndToEndID names a debit in the file and in a return: the
// attempt's reference, which identifies the payment, and the run, so that
// the same attempt collected again after a cancelled run is told apart.
func debitEndToEndID(paymentReference string, runID int64) string {
	return fmt.Sprintf("%s-%d", paymentReference, runID)
}

// dueDebits are the orders of an organisation due for collection by until.
func dueDebits(ctx context.Context, db bun.IDB, orgID int64, until time.Time) ([]debitCandidate, error) {
	var orders []engine.Order
	// The due date is compared here, not in SQL: SQLite keeps dates as text.
	err := db.NewSelect().Model(&orders).
		Where("?TableAlias.organisation_id = ? AND ?TableAlias.status = ? AND ?TableAlias.payment_method = ?", orgID, engine.OrderUnpaid, payment.DirectDebitProvider).
		Where("?TableAlias.debit_mandate_id IS NOT NULL AND ?TableAlias.debit_due_on IS NOT NULL").
		Where("NOT EXISTS (SELECT 1 FROM debits d WHERE d.order_id = ?TableAlias.id AND d.status IN (?, ?))", payment.DebitInRun, payment.DebitCollected).
		Where("EXISTS (SELECT 1 FROM debit_mandates m WHERE m.id = ?TableAlias.debit_mandate_id AND m.revoked_at IS NULL)").
		Order("id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("load due debits: %w", err)
	}
	var due []engine.Order
	for _, o := range orders {
		if !payment.DateOf(*o.DebitDueOn).After(until) {
			due = append(due, o)
		}
	}
	if len(due) == 0 {
		return nil, nil
	}
	// Their mandates and periods in one query each, not one per order.
	mandateIDs, periodIDs := make([]int64, len(due)), make([]int64, len(due))
	for i, o := range due {
		mandateIDs[i], periodIDs[i] = *o.DebitMandateID, o.PeriodID
	}
	var mandates []DebitMandate
	if err := db.NewSelect().Model(&mandates).Where("id IN (?)", bun.List(mandateIDs)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load mandates: %w", err)
	}
	var periods []engine.MembershipPeriod
	if err := db.NewSelect().Model(&periods).Where("id IN (?)", bun.List(periodIDs)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load periods: %w", err)
	}
	mandateOf, periodName := make(map[int64]DebitMandate, len(mandates)), make(map[int64]string, len(periods))
	for _, m := range mandates {
		mandateOf[m.ID] = m
	}
	for _, p := range periods {
		periodName[p.ID] = p.Name
	}
	out := make([]debitCandidate, 0, len(due))
	for _, o := range due {
		out = append(out, debitCandidate{Order: o, Mandate: mandateOf[*o.DebitMandateID], Period: periodName[o.PeriodID]})
	}
	return out, nil
}

// pendingAttemptsOf are the open direct-debit attempts of the candidates'
// orders, by order, read in one query.
func pendingAttemptsOf(ctx context.Context, db bun.IDB, due []debitCandidate) (map[int64]*engine.Payment, error) {
	ids := make([]int64, len(due))
	for i, d := range due {
		ids[i] = d.Order.ID
	}
	var pays []engine.Payment
	if err := db.NewSelect().Model(&pays).Where("order_id IN (?) AND status = ?", bun.List(ids), engine.PaymentPending).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load open attempts: %w", err)
	}
	out := make(map[int64]*engine.Payment, len(pays))
	for i := range pays {
		out[pays[i].OrderID] = &pays[i] // the newest, if ever two
	}
	return out, nil
}

// loadOrderLines fills an order's lines (checkoutFor describes them).
func loadOrderLines(ctx context.Context, db bun.IDB, o *engine.Order) error {
	if err := db.NewSelect().Model(&o.Lines).Where("order_id = ?", o.ID).Order("line_no").Scan(ctx); err != nil {
		return fmt.Errorf("load order lines: %w", err)
	}
	return nil
}

// DebitRuns lists an organisation's collection runs, newest first,
// without their files.
func (s *Service) DebitRuns(ctx context.Context, orgID int64) (_ []payment.DebitRun, err error) {
	var runs []payment.DebitRun
	if err := s.DB().NewSelect().Model(&runs).ExcludeColumn("file").Where("organisation_id = ?", orgID).
		Order("created_at DESC", "id DESC").Limit(200).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load collection runs: %w", err)
	}
	return runs, nil
}

// DebitRunDetail is a run with its debits as the treasurer checks them.
type DebitRunDetail struct {
	Run    payment.DebitRun
	Debits []DebitLine
	// LeftOut are the due debits the run could not put into its file and
	// that are still due and left out: no later run took or left them out
	// since, and their mandate was not given, kept or changed again.
	LeftOut []LeftOutDebit
}

// DebitLine is one debit of a run with whom it collects from.
type DebitLine struct {
	payment.Debit
	MandateReference string
	Holder           string
	MaskedIBAN       string
	OrderReference   string
	RegistrationID   int64
	// MandateEnded says the mandate no longer holds (revoked, expired or
	// ended by a return): a prepared run must not collect under it.
	MandateEnded bool
}

// DebitRunFile is the run whose file is to be handed out (the admin API,
// portal debits file; the staff page checks the same): refused (conflict)
// for a cancelled run, whose file must not reach the bank any more;
// another organisation's run is not found.
func (s *Service) DebitRunFile(ctx context.Context, orgID, runID int64) (_ *payment.DebitRun, err error) {
	run, err := loadDebitRun(ctx, s.DB(), orgID, runID)
	if err != nil {
		return nil, err
	}
	if run.Status == payment.DebitRunCancelled {
		return nil, engine.Errorf(engine.CodeConflict, "collection run %d was cancelled: its file must not reach the bank any more", run.ID)
	}
	return run, nil
}

// DebitRunByID returns one run of an organisation (its file included),
// its debits and those it left out; another organisation's run is not
// found.
func (s *Service) DebitRunByID(ctx context.Context, orgID, runID int64) (_ *DebitRunDetail, err error) {
	run, err := loadDebitRun(ctx, s.DB(), orgID, runID)
	if err != nil {
		return nil, err
	}
	var debits []payment.Debit
	if err := s.DB().NewSelect().Model(&debits).Where("run_id = ?", run.ID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load debits: %w", err)
	}
	out := &DebitRunDetail{Run: *run}
	if out.LeftOut, err = leftOutOf(ctx, s.DB(), run.ID); err != nil {
		return nil, err
	}
	if len(debits) == 0 {
		return out, nil
	}
	// Their mandates and orders in one query each, not one per debit.
	mandateIDs, orderIDs := make([]int64, len(debits)), make([]int64, len(debits))
	for i, d := range debits {
		mandateIDs[i], orderIDs[i] = d.MandateID, d.OrderID
	}
	var mandates []DebitMandate
	if err := s.DB().NewSelect().Model(&mandates).Where("id IN (?)", bun.List(mandateIDs)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load mandates: %w", err)
	}
	var orders []engine.Order
	if err := s.DB().NewSelect().Model(&orders).Where("id IN (?)", bun.List(orderIDs)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load orders: %w", err)
	}
	mandateOf, orderOf := make(map[int64]DebitMandate, len(mandates)), make(map[int64]engine.Order, len(orders))
	for _, m := range mandates {
		mandateOf[m.ID] = m
	}
	for _, o := range orders {
		orderOf[o.ID] = o
	}
	for _, d := range debits {
		m, o := mandateOf[d.MandateID], orderOf[d.OrderID]
		out.Debits = append(out.Debits, DebitLine{Debit: d, MandateReference: m.Reference, Holder: m.Holder, MaskedIBAN: MaskedIBAN(m.IBAN),
			OrderReference: o.PayReference, RegistrationID: o.ProcessInstanceID, MandateEnded: m.RevokedAt != nil})
	}
	return out, nil
}

// leftOutOf are the debits run left out that are still left out: the
// unpaid orders recorded with it, still due (a revoked or expired mandate,
// a return, takes the due date away), and their mandates.
func leftOutOf(ctx context.Context, db bun.IDB, runID int64) ([]LeftOutDebit, error) {
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Where("debit_problem_run_id = ? AND debit_problem <> '' AND status = ? AND debit_due_on IS NOT NULL", runID, engine.OrderUnpaid).
		Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load debits left out: %w", err)
	}
	if len(orders) == 0 {
		return nil, nil
	}
	var ids []int64
	for _, o := range orders {
		if o.DebitMandateID != nil {
			ids = append(ids, *o.DebitMandateID)
		}
	}
	mandateOf := map[int64]DebitMandate{}
	if len(ids) > 0 {
		var mandates []DebitMandate
		if err := db.NewSelect().Model(&mandates).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load mandates: %w", err)
		}
		for _, m := range mandates {
			mandateOf[m.ID] = m
		}
	}
	out := make([]LeftOutDebit, len(orders))
	for i, o := range orders {
		var m DebitMandate
		if o.DebitMandateID != nil {
			m = mandateOf[*o.DebitMandateID]
		}
		out[i] = leftOut(debitCandidate{Order: o, Mandate: m}, o.DebitProblem)
	}
	return out, nil
}

func loadDebitRun(ctx context.Context, db bun.IDB, orgID, runID int64) (*payment.DebitRun, error) {
	run := new(payment.DebitRun)
	err := db.NewSelect().Model(run).Where("id = ? AND organisation_id = ?", runID, orgID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.Errorf(engine.CodeNotFound, "collection run not found")
	}
	if err != nil {
		return nil, fmt.Errorf("load collection run: %w", err)
	}
	return run, nil
}

// CancelDebitRun withdraws a prepared run as a whole: its debits are due
// again for the next run. A sent run cannot be cancelled (its debits are
// at the bank; a return takes one back); a cancelled one stays cancelled.
func (s *Service) CancelDebitRun(ctx context.Context, actor engine.Actor, orgID, runID int64) (_ *payment.DebitRun, err error) {
	var run *payment.DebitRun
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		run, err = lockPreparedRun(ctx, tx, orgID, runID, "cancelled")
		if err != nil || run.Status == payment.DebitRunCancelled {
			return err
		}
		now := s.Clock()
		run.Status, run.CancelledAt = payment.DebitRunCancelled, &now
		if _, err := tx.NewUpdate().Model(run).Column("status", "cancelled_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("cancel collection run: %w", err)
		}
		if _, err := tx.NewUpdate().Model((*payment.Debit)(nil)).Set("status = ?", payment.DebitCancelled).
			Where("run_id = ? AND status = ?", run.ID, payment.DebitInRun).Exec(ctx); err != nil {
			return fmt.Errorf("cancel debits: %w", err)
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "debit_run.cancel", TargetType: "debit_run",
			TargetID: fmt.Sprint(run.ID), Before: map[string]any{"status": payment.DebitRunPrepared}, After: map[string]any{"status": payment.DebitRunCancelled}})
	})
	if err != nil {
		return nil, err
	}
	run.File = nil
	return run, nil
}

// lockPreparedRun loads a run for a change, locked on PostgreSQL; a run in
// the state the change leads to comes back as it is (a repeated request
// changes nothing), any other state that is not prepared is a conflict.
func lockPreparedRun(ctx context.Context, tx bun.Tx, orgID, runID int64, change string) (*payment.DebitRun, error) {
	run := new(payment.DebitRun)
	err := store.ForUpdate(tx.NewSelect().Model(run).ExcludeColumn("file").Where("id = ? AND organisation_id = ?", runID, orgID)).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.Errorf(engine.CodeNotFound, "collection run not found")
	}
	if err != nil {
		return nil, fmt.Errorf("load collection run: %w", err)
	}
	switch {
	case run.Status == payment.DebitRunPrepared:
		return run, nil
	case string(run.Status) == change:
		return run, nil
	default:
		return nil, engine.Errorf(engine.CodeConflict, "this collection run is %s; it cannot be %s", run.Status, change)
	}
}

// SentDebitRun is what marking a run sent did.
type SentDebitRun struct {
	Run payment.DebitRun
	// Settled counts the payments the run completed now; Replayed those
	// settled before (a repeated mark); Problems the debits whose
	// attempt did not settle (with why), left for staff.
	Settled, Replayed int
	Problems          []string
}

// MarkDebitRunSent records that the club's bank has the run's file: the
// run is sent (with its audit entry), then its debits are collected,
// their mandates used, and each payment settled as paid exactly as an
// online payment settles (order paid, memberships active, confirmation
// queued, webhook events) unless a return arrives later
// (debit_returns.go), in batches (settleSentDebits). Marking a sent run
// again settles what an interrupted call left, and otherwise changes
// nothing.
func (s *Service) MarkDebitRunSent(ctx context.Context, actor engine.Actor, orgID, runID int64) (_ *SentDebitRun, err error) {
	var run *payment.DebitRun
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		var err error
		if run, err = lockPreparedRun(ctx, tx, orgID, runID, string(payment.DebitRunSent)); err != nil {
			return err
		}
		if run.Status == payment.DebitRunSent {
			return nil // again: what is left of it is settled below
		}
		now := s.Clock()
		run.Status, run.SentAt = payment.DebitRunSent, &now
		if _, err := tx.NewUpdate().Model(run).Column("status", "sent_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("mark collection run sent: %w", err)
		}
		return s.AppendAudit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "debit_run.send", TargetType: "debit_run",
			TargetID: fmt.Sprint(run.ID), Before: map[string]any{"status": payment.DebitRunPrepared},
			After: map[string]any{"status": payment.DebitRunSent, "debits": run.DebitCount}})
	})
	if err != nil {
		return nil, err
	}
	// The debits an earlier mark (or the debits.settle job) settled are
	// unchanged by this one: a repeated mark says so rather than nothing.
	settledBefore, err := s.DB().NewSelect().Model((*payment.Debit)(nil)).Where("run_id = ? AND status = ?", run.ID, payment.DebitCollected).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("count settled debits: %w", err)
	}
	out := &SentDebitRun{Run: *run, Replayed: int(settledBefore)}
	return out, s.settleSentDebits(ctx, run, out)
}

// debitBatch is how many debits of a sent run settle in one transaction:
// a season's run settles in seconds, and on SQLite, whose one connection
// a transaction holds, the members' requests are served between batches.
const debitBatch = 100

// settleWorkers is how many batches settle at once on PostgreSQL: a
// debit's settlement is some twenty statements, each a round trip, so one
// connection leaves the machine mostly waiting (issue 42: 5-7 ms a debit,
// about a minute for a run of 10,000). The batches' debits are disjoint,
// and so are their registrations, orders, payments and mandates: they
// take no lock another batch waits for.
const settleWorkers = 3

// settleSentDebits settles the debits of a sent run still in the run, a
// batch per transaction: each debit collected, its mandate used (the 36
// months start again; an amendment its file stated is cleared), its
// attempt settled as paid by settleIn. A batch that fails leaves its
// debits in the run for the next call (marking the run sent again, or the
// debits.settle job), and the settlement's event ids make a debit settle
// once, whoever settles it. On PostgreSQL settleWorkers batches settle at
// once; the result lists the batches' problems in the debits' order.
func (s *Service) settleSentDebits(ctx context.Context, run *payment.DebitRun, out *SentDebitRun) error {
	provider := s.debitProvider(run.OrganisationID)
	sentAt := s.Clock()
	if run.SentAt != nil {
		sentAt = *run.SentAt
	}
	var ids []int64
	if err := s.DB().NewSelect().Model((*payment.Debit)(nil)).Column("id").Where("run_id = ? AND status = ?", run.ID, payment.DebitInRun).
		Order("id").Scan(ctx, &ids); err != nil {
		return fmt.Errorf("load debits: %w", err)
	}
	var batches [][]int64
	for from := 0; from < len(ids); from += debitBatch {
		batches = append(batches, ids[from:min(from+debitBatch, len(ids))])
	}
	workers := 1
	if s.DB().Dialect().Name() == dialect.PG {
		workers = settleWorkers
	}
	results := make([]*SentDebitRun, len(batches))
	var (
		mu       sync.Mutex
		failure  error
		wg       sync.WaitGroup
		next     = make(chan int)
		failed   = func() bool { mu.Lock(); defer mu.Unlock(); return failure != nil }
		settleIn = func(i int) {
			var batch SentDebitRun
			err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
				batch = SentDebitRun{} // a retried transaction starts over
				return s.settleDebitBatch(ctx, tx, provider, run, batches[i], sentAt, &batch)
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && failure == nil {
				failure = err
			}
			if err == nil {
				results[i] = &batch
			}
		}
	)
	for range min(workers, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				settleIn(i)
			}
		}()
	}
	for i := range batches {
		if failed() {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	for _, batch := range results {
		if batch != nil {
			out.Settled, out.Replayed = out.Settled+batch.Settled, out.Replayed+batch.Replayed
			out.Problems = append(out.Problems, batch.Problems...)
		}
	}
	return failure
}

// settleDebitBatch settles the debits ids of a sent run in tx: those still
// in the run are marked collected and their mandates used with one
// statement each for the batch, their payments' references read at once,
// the amendments their files stated cleared, then their attempts settled
// as paid together (payment.SettleBatch).
func (s *Service) settleDebitBatch(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, run *payment.DebitRun, ids []int64, sentAt time.Time, out *SentDebitRun) error {
	var collected []int64
	if err := tx.NewUpdate().Model((*payment.Debit)(nil)).Set("status = ?", payment.DebitCollected).
		Where("id IN (?) AND status = ?", bun.List(ids), payment.DebitInRun).Returning("id").Scan(ctx, &collected); err != nil {
		return fmt.Errorf("mark debits collected: %w", err)
	}
	if len(collected) == 0 {
		return nil // another instance settled them meanwhile
	}
	var debits []payment.Debit
	if err := tx.NewSelect().Model(&debits).Where("id IN (?)", bun.List(collected)).Order("id").Scan(ctx); err != nil {
		return fmt.Errorf("load debits: %w", err)
	}
	mandates := make([]int64, len(debits))
	payments := make([]int64, len(debits))
	for i, d := range debits {
		mandates[i], payments[i] = d.MandateID, d.PaymentID
	}
	if _, err := tx.NewUpdate().Model((*DebitMandate)(nil)).Set("last_collected_at = ?", sentAt).Where("id IN (?)", bun.List(mandates)).Exec(ctx); err != nil {
		return fmt.Errorf("mark mandates used: %w", err)
	}
	var refs []struct {
		ID        int64  `bun:"id"`
		Reference string `bun:"reference"`
	}
	if err := tx.NewSelect().Model((*engine.Payment)(nil)).Column("id", "reference").Where("id IN (?)", bun.List(payments)).Scan(ctx, &refs); err != nil {
		return fmt.Errorf("load payments: %w", err)
	}
	refOf := make(map[int64]string, len(refs))
	for _, r := range refs {
		refOf[r.ID] = r.Reference
	}
	confs := make([]engine.PaymentConfirmation, len(debits))
	results := make([]*payment.PaymentResult, len(debits))
	for i, d := range debits {
		ref, ok := refOf[d.PaymentID]
		if !ok {
			return fmt.Errorf("load payment %d: %w", d.PaymentID, sql.ErrNoRows)
		}
		if err := stateAmendment(ctx, tx, run, d); err != nil {
			return err
		}
		confs[i] = engine.PaymentConfirmation{Reference: ref, Outcome: engine.OutcomeSuccess,
			AmountMinor: d.AmountMinor, Currency: d.Currency, EventID: fmt.Sprintf("debit:%d:%s", run.OrganisationID, d.EndToEndID),
			EventType: debitCollectedEvent, TransactionID: d.EndToEndID, Note: "collected in run " + run.MessageID}
		results[i] = &payment.PaymentResult{Reference: ref}
	}
	// Their attempts settled as paid, the batch at once (payment.SettleBatch).
	if _, err := payment.Of(s.Service).SettleBatch(ctx, tx, provider, confs, results); err != nil {
		return fmt.Errorf("settle the debits of run %s: %w", run.MessageID, err)
	}
	for i, result := range results {
		switch {
		case result.Mismatch:
			out.Problems = append(out.Problems, fmt.Sprintf("%s: the amount does not match the payment", debits[i].EndToEndID))
		case result.Replayed:
			out.Replayed++
		default:
			out.Settled++
		}
	}
	return nil
}

// stateAmendment clears the amendment a debit's file stated (d.Amended)
// from its mandate, unless one was made after the file was written: that
// one is still to state in the next.
func stateAmendment(ctx context.Context, tx bun.Tx, run *payment.DebitRun, d payment.Debit) error {
	if !d.Amended {
		return nil
	}
	// Compared here: SQLite keeps times as text.
	var amendedAt *time.Time
	if err := tx.NewSelect().Model((*DebitMandate)(nil)).Column("amended_at").Where("id = ?", d.MandateID).Scan(ctx, &amendedAt); err != nil {
		return fmt.Errorf("load mandate: %w", err)
	}
	if amendedAt == nil || !amendedAt.After(run.CreatedAt) {
		if _, err := tx.NewUpdate().Model((*DebitMandate)(nil)).Set("previous_iban = ''").Set("previous_bic = ''").
			Where("id = ?", d.MandateID).Exec(ctx); err != nil {
			return fmt.Errorf("mark the amendment stated: %w", err)
		}
	}
	return nil
}

// debitCollectedEvent is the payment event of a debit sent to the bank.
const debitCollectedEvent = "direct_debit.collected"

// debitProvider is the organisation's direct-debit provider, or a stand-in
// of its name when direct debit was switched off since the run was
// written: the run still went to the bank and its money counts.
func (s *Service) debitProvider(orgID int64) engine.PaymentProvider {
	if p := payment.Of(s.Service).ProviderForMethod(orgID, payment.DirectDebitProvider); p != nil && p.Name() == payment.DirectDebitProvider {
		return p
	}
	return collectedDebits{}
}

// collectedDebits settles the debits of a run whose club no longer offers
// direct debit (see manualTransfers).
type collectedDebits struct{}

func (collectedDebits) Name() string { return payment.DirectDebitProvider }
func (collectedDebits) CreateCheckout(context.Context, engine.CheckoutRequest) (engine.Checkout, error) {
	return engine.Checkout{}, engine.Errorf(engine.CodeConflict, "this club no longer collects by direct debit")
}
func (collectedDebits) Retrieve(_ context.Context, p engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeOpen}, nil
}
func (collectedDebits) Expire(context.Context, engine.Payment) error { return nil }
func (collectedDebits) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", payment.ErrManualRefund
}

// SettleDueDebitRuns marks sent the prepared runs whose earliest due date
// has passed (the club's bank collected them though nobody said so), each
// as MarkDebitRunSent does, for every organisation or the one ctx is
// scoped to (engine/job_scope.go). It returns how many runs it marked.
func (s *Service) SettleDueDebitRuns(ctx context.Context) (_ int, err error) {
	today := payment.DateOf(s.Clock())
	var runs []payment.DebitRun
	q := engine.ScopeOrg(ctx, s.DB().NewSelect().Model(&runs).ExcludeColumn("file").Where("status = ?", payment.DebitRunPrepared), "organisation_id")
	if err := q.Order("id").Scan(ctx); err != nil {
		return 0, fmt.Errorf("load prepared collection runs: %w", err)
	}
	n := 0
	// A sent run whose settling was interrupted (an instance stopped
	// between batches) is finished first.
	var unfinished []payment.DebitRun
	q = engine.ScopeOrg(ctx, s.DB().NewSelect().Model(&unfinished).ExcludeColumn("file").Where("status = ?", payment.DebitRunSent).
		Where("EXISTS (SELECT 1 FROM debits d WHERE d.run_id = debit_run.id AND d.status = ?)", payment.DebitInRun), "organisation_id")
	if err := q.Order("id").Scan(ctx); err != nil {
		return 0, fmt.Errorf("load unfinished collection runs: %w", err)
	}
	for i := range unfinished {
		if err := s.settleSentDebits(ctx, &unfinished[i], &SentDebitRun{}); err != nil {
			return n, err
		}
	}
	for _, r := range runs {
		var dues []time.Time
		if err := s.DB().NewSelect().Model((*payment.Debit)(nil)).Column("due_on").Where("run_id = ?", r.ID).Scan(ctx, &dues); err != nil {
			return n, fmt.Errorf("load due dates: %w", err)
		}
		passed := false
		for _, d := range dues {
			passed = passed || payment.DateOf(d).Before(today)
		}
		if !passed {
			continue
		}
		if _, err := s.MarkDebitRunSent(ctx, engine.Actor{Name: "due date passed"}, r.OrganisationID, r.ID); err != nil {
			var e *engine.Error
			if errors.As(err, &e) && e.Code == engine.CodeConflict {
				continue // cancelled or sent meanwhile
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// DebitRunFileName is the name a run's file downloads as.
func DebitRunFileName(r payment.DebitRun) string {
	return strings.ToLower(r.MessageID) + "-" + r.FileVersion + ".xml"
}

// ScheduleDebitRuns adds the hourly settlement of collection runs to r: a
// prepared run whose due date passed was collected by the bank, and a run
// whose settling stopped between batches is finished (SettleDueDebitRuns).
func (s *Service) ScheduleDebitRuns(r *jobs.Runner) {
	r.Every(engine.KindSettleDueDebitRuns, time.Hour)
	r.Handle(engine.KindSettleDueDebitRuns, func(ctx context.Context, j *jobs.Job) error {
		n, err := s.SettleDueDebitRuns(engine.JobScope(ctx, j))
		if n > 0 {
			s.Log.InfoContext(ctx, "collection runs past their due date marked sent", "count", n)
		}
		return err
	})
}
