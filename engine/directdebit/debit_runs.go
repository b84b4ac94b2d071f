package directdebit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
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
// no run. The run, its debits and the audit entry are written in one
// transaction; a concurrent run for the same orders fails on the unique
// index and changes nothing.
func (s *Service) CollectDebits(ctx context.Context, req CollectRequest) (_ *payment.DebitRun, err error) {
	defer engine.ClassifyUnavailable(&err)
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
		if p.Provider != payment.DirectDebitProvider || p.AmountMinor != order.TotalMinor {
			return nil, engine.Errorf(engine.CodeConflict, "order %d has an open payment of another method or amount; it cannot be collected until that one is closed", order.ID)
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
	run := &payment.DebitRun{OrganisationID: req.OrganisationID, FileVersion: version, UntilOn: until, Status: payment.DebitRunPrepared,
		Currency: "EUR", CreatedBy: req.Actor.Name, CreatedAt: now, File: []byte{}}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		run.MessageID = "PENDING-" + engine.NewReference("")
		run.DebitCount, run.TotalMinor, run.File = 0, 0, []byte{}
		if _, err := tx.NewInsert().Model(run).Exec(ctx); err != nil {
			return fmt.Errorf("store collection run: %w", err)
		}
		run.MessageID = fmt.Sprintf("DD-%d-%d", run.OrganisationID, run.ID)
		file := banking.DirectDebitFile{Version: version, MessageID: run.MessageID, Created: now.UTC().Truncate(time.Second),
			Creditor: banking.DirectDebitCreditor{Name: ps.BankCreditorName, IBAN: ps.BankIBAN, BIC: ps.BankBIC, CreditorID: ps.DebitCreditorID}}
		earliest := banking.NextTARGETBusinessDay(payment.DateOf(now).AddDate(0, 0, 1))
		firstOf := map[int64]bool{}
		debits := make([]payment.Debit, 0, len(due))
		for _, d := range due {
			p := attempts[d.Order.ID]
			m := d.Mandate
			first, seen := firstOf[m.ID]
			if !seen {
				first = m.LastCollectedAt == nil
				firstOf[m.ID] = first
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
			debits = append(debits, debit)
			dd := banking.DirectDebit{EndToEndID: debit.EndToEndID, AmountCents: debit.AmountMinor, Sequence: seq, DueDate: dueOn,
				MandateID: m.Reference, MandateSigned: m.SignedAt, DebtorName: m.Holder, DebtorIBAN: m.IBAN, DebtorBIC: m.BIC,
				RemittanceText: fmt.Sprintf("%s %s, order %d", org.Name, d.Period, d.Order.ID)}
			if debit.Amended {
				dd.Amendment = &banking.MandateAmendment{OriginalDebtorIBAN: m.PreviousIBAN,
					ChangedBank: !banking.SameBank(banking.IBAN(m.PreviousIBAN), banking.IBAN(m.IBAN))}
			}
			file.Debits = append(file.Debits, dd)
			run.DebitCount++
			run.TotalMinor += debit.AmountMinor
		}
		// One statement for the debits; another run taking one of these
		// orders meanwhile breaks the unique index and changes nothing.
		if _, err := tx.NewInsert().Model(&debits).Exec(ctx); err != nil {
			if engine.IsUniqueViolation(err) {
				return engine.Errorf(engine.CodeConflict, "another collection run took one of these orders meanwhile; look at the runs again")
			}
			return fmt.Errorf("store debits: %w", err)
		}
		var buf bytes.Buffer
		if err := banking.WriteDirectDebits(&buf, file); err != nil {
			// The settings or a mandate cannot make a valid file: say which.
			return &engine.Error{Code: engine.CodeConflict, Message: "the collection file cannot be written: " + err.Error(), Err: err}
		}
		run.File = buf.Bytes()
		if _, err := tx.NewUpdate().Model(run).Column("message_id", "debit_count", "total_minor", "file").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("store collection run: %w", err)
		}
		return s.AppendAudit(ctx, tx, req.Actor, engine.AuditEntry{OrganisationID: run.OrganisationID, Action: "debit_run.create",
			TargetType: "debit_run", TargetID: fmt.Sprint(run.ID),
			After: map[string]any{"messageId": run.MessageID, "until": until.Format(time.DateOnly), "debits": run.DebitCount,
				"total": engine.FormatMoney(run.TotalMinor, run.Currency), "version": run.FileVersion}})
	})
	if err != nil {
		return nil, err
	}
	return run, nil
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
	defer engine.ClassifyUnavailable(&err)
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
	defer engine.ClassifyUnavailable(&err)
	run, err := loadDebitRun(ctx, s.DB(), orgID, runID)
	if err != nil {
		return nil, err
	}
	if run.Status == payment.DebitRunCancelled {
		return nil, engine.Errorf(engine.CodeConflict, "collection run %d was cancelled: its file must not reach the bank any more", run.ID)
	}
	return run, nil
}

// DebitRunByID returns one run of an organisation (its file included) and
// its debits; another organisation's run is not found.
func (s *Service) DebitRunByID(ctx context.Context, orgID, runID int64) (_ *DebitRunDetail, err error) {
	defer engine.ClassifyUnavailable(&err)
	run, err := loadDebitRun(ctx, s.DB(), orgID, runID)
	if err != nil {
		return nil, err
	}
	var debits []payment.Debit
	if err := s.DB().NewSelect().Model(&debits).Where("run_id = ?", run.ID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load debits: %w", err)
	}
	out := &DebitRunDetail{Run: *run}
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
	defer engine.ClassifyUnavailable(&err)
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
	err := engine.ForUpdate(tx.NewSelect().Model(run).ExcludeColumn("file").Where("id = ? AND organisation_id = ?", runID, orgID)).Scan(ctx)
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
	defer engine.ClassifyUnavailable(&err)
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

// settleSentDebits settles the debits of a sent run still in the run, a
// batch per transaction: each debit collected, its mandate used (the 36
// months start again; an amendment its file stated is cleared), its
// attempt settled as paid by settleIn. A batch that fails leaves its
// debits in the run for the next call (marking the run sent again, or the
// debits.settle job), and the settlement's event ids make a debit settle
// once, whoever settles it.
func (s *Service) settleSentDebits(ctx context.Context, run *payment.DebitRun, out *SentDebitRun) error {
	provider := s.debitProvider(run.OrganisationID)
	sentAt := s.Clock()
	if run.SentAt != nil {
		sentAt = *run.SentAt
	}
	for {
		var batch SentDebitRun
		n := 0
		err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
			batch = SentDebitRun{} // a retried transaction starts over
			var debits []payment.Debit
			if err := tx.NewSelect().Model(&debits).Where("run_id = ? AND status = ?", run.ID, payment.DebitInRun).Order("id").Limit(debitBatch).Scan(ctx); err != nil {
				return fmt.Errorf("load debits: %w", err)
			}
			n = len(debits)
			for _, d := range debits {
				if err := s.settleSentDebit(ctx, tx, provider, run, d, sentAt, &batch); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		out.Settled, out.Replayed = out.Settled+batch.Settled, out.Replayed+batch.Replayed
		out.Problems = append(out.Problems, batch.Problems...)
		if n < debitBatch {
			return nil
		}
	}
}

// settleSentDebit is one debit of settleSentDebits, in its transaction.
func (s *Service) settleSentDebit(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, run *payment.DebitRun, d payment.Debit, sentAt time.Time, out *SentDebitRun) error {
	res, err := tx.NewUpdate().Model((*payment.Debit)(nil)).Set("status = ?", payment.DebitCollected).Where("id = ? AND status = ?", d.ID, payment.DebitInRun).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark debit collected: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil // another instance settled it meanwhile
	}
	if _, err := tx.NewUpdate().Model((*DebitMandate)(nil)).Set("last_collected_at = ?", sentAt).Where("id = ?", d.MandateID).Exec(ctx); err != nil {
		return fmt.Errorf("mark mandate used: %w", err)
	}
	if d.Amended {
		// The file stated the amendment; one made after the file was
		// written is still to state in the next (compared here: SQLite
		// keeps times as text).
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
	}
	var ref string
	if err := tx.NewSelect().Model((*engine.Payment)(nil)).Column("reference").Where("id = ?", d.PaymentID).Scan(ctx, &ref); err != nil {
		return fmt.Errorf("load payment: %w", err)
	}
	result := &payment.PaymentResult{Reference: ref}
	if _, err := payment.Of(s.Service).SettleIn(ctx, tx, provider, engine.PaymentConfirmation{Reference: ref, Outcome: engine.OutcomeSuccess,
		AmountMinor: d.AmountMinor, Currency: d.Currency, EventID: fmt.Sprintf("debit:%d:%s", run.OrganisationID, d.EndToEndID),
		EventType: debitCollectedEvent, TransactionID: d.EndToEndID, Note: "collected in run " + run.MessageID}, result); err != nil {
		return fmt.Errorf("settle debit %s: %w", d.EndToEndID, err)
	}
	switch {
	case result.Mismatch:
		out.Problems = append(out.Problems, fmt.Sprintf("%s: the amount does not match the payment", d.EndToEndID))
	case result.Replayed:
		out.Replayed++
	default:
		out.Settled++
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
	defer engine.ClassifyUnavailable(&err)
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

// debitRunFileName is the name a run's file downloads as.
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
