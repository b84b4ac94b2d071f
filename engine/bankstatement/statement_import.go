package bankstatement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/directdebit"
	"portal/engine/payment"
)

// The bank statement import: a camt.053/054/052 statement's credits are
// matched to open bank-transfer payments (banking.Match) and captured one
// by one through CapturePayment's settlement, its returned direct debits
// taken back (engine/directdebit/debit_returns.go), and the credits it could not match kept
// for the treasurer (bank_credits.go).

// StatementLine is the import's word on one credit.
type StatementLine struct {
	Credit  banking.Credit
	Outcome banking.Outcome
	Reason  string
	// RF is the payment the credit was matched to ("" when none).
	RF banking.Reference
	// Captured: the credit was captured (completing its registration, or
	// recording a partial, excess or currency problem on its payment).
	Captured bool
	// Completed: the capture completed the registration.
	Completed bool
	// Kept: the credit could not be matched and was kept for a treasurer
	// to resolve (BankCredits).
	Kept bool
	// SecondCredit: the credit paid an order paid already; it was
	// recorded as a second payment, owed back to the member and listed
	// among the payments needing attention, as a capture by hand is.
	SecondCredit bool
	// Err is why a capture failed (the rest of the import goes on).
	Err error
}

// StatementImport is what an import did.
type StatementImport struct {
	Message, MessageID string
	// OtherAccounts counts credits and returned debits to accounts other
	// than Account; AlreadyImported the credits captured or kept by an
	// earlier import (by the organisation, account and transaction key),
	// left out of Lines; ReturnsBefore the returned debits applied before
	// (engine/directdebit/debit_returns.go), left out of Returns; NotCredits
	// the entries that are neither credits nor returned debits. A report
	// counts returns as returns, never as credits.
	OtherAccounts, AlreadyImported, ReturnsBefore, NotCredits int
	Lines                                                     []StatementLine
	// Returns are the returned direct debits to Account
	// (engine/directdebit/debit_returns.go): taken back, unknown, or a problem for staff.
	Returns []directdebit.ReturnLine
}

// ImportStatement matches a bank statement's credits to the account
// against the open bank-transfer payments (banking.Match) and captures the
// ones it can tell: an exact reference and amount, a unique amount without
// a usable reference, and (recorded as problems, never completing) a
// reference with a partial or excess amount or another currency. The
// captures settle in batches (payment.CapturePayments), and a capture is
// never lost with another's: a batch that fails is captured again one by
// one, each in its own transaction. Each stores the bank's id of the
// credit, so a credit already captured by an earlier import is left out
// and re-running an import captures nothing twice. Unknown credits, and
// second payments for a payment already paid, are kept (once, by the
// bank's id) as unmatched credits for a treasurer (ResolveCredit); a
// credit listed twice in the file is only listed. Returned direct debits
// in the statement take their debits back (ImportReturns), once each; a
// return naming no debit of the club is reported in Returns and changes
// nothing, while the rest of the statement still imports.
func (s *Service) ImportStatement(ctx context.Context, st banking.Statement, opt engine.StatementOptions) (_ *StatementImport, err error) {
	if opt.Account == "" {
		return nil, engine.Errorf(engine.CodeInvalid, "the account to import for is required (PORTAL_BANK_IBAN)")
	}
	rep := &StatementImport{Message: st.Message, MessageID: st.MessageID, NotCredits: st.Skipped}
	// Returned debits first: a return and a credit in one statement are
	// independent, and each return is its own transaction as each
	// capture is.
	returns, otherAccounts, already := directdebit.Of(s.Service).ImportReturns(ctx, st, opt)
	rep.Returns = append(rep.Returns, returns...)
	rep.ReturnsBefore = already
	mine := st.CreditsTo(string(opt.Account))
	rep.OtherAccounts = otherAccounts + len(st.Credits) - len(mine)
	if len(mine) == 0 {
		return rep, nil
	}
	// A credit is recorded by its transaction key; one imported before
	// transaction keys is found by the key it was recorded by then.
	ids, previous := make([]string, len(mine)), make([]string, len(mine))
	lookup := make([]string, 0, 2*len(mine))
	for i, c := range mine {
		ids[i] = CreditEventID(opt.Organisation, string(opt.Account), creditIdentity(c))
		lookup = append(lookup, ids[i])
		if c.PreviousKey != "" {
			previous[i] = CreditEventID(opt.Organisation, string(opt.Account), c.PreviousKey)
			lookup = append(lookup, previous[i])
		}
	}
	var seen []string
	if err := s.DB().NewSelect().Model((*engine.PaymentEvent)(nil)).Column("event_id").
		Where("provider = ? AND event_id IN (?)", payment.BankTransferProvider, bun.List(lookup)).Scan(ctx, &seen); err != nil {
		return nil, fmt.Errorf("load imported credits: %w", err)
	}
	done := make(map[string]bool, len(seen))
	for _, id := range seen {
		done[id] = true
	}
	legacy, err := s.legacyImportedCredits(ctx, opt.Organisation, mine)
	if err != nil {
		return nil, err
	}
	kept, err := keptCredits(ctx, s.DB(), opt.Organisation, string(opt.Account), mine)
	if err != nil {
		return nil, err
	}
	before, err := recordedBeforeKeys(ctx, s.DB(), opt.Organisation, string(opt.Account), mine)
	if err != nil {
		return nil, err
	}
	fresh := mine[:0:0]
	for i, c := range mine {
		if done[ids[i]] || previous[i] != "" && done[previous[i]] || legacy[i] || kept[creditIdentity(c)] || before[i] {
			rep.AlreadyImported++
			continue
		}
		fresh = append(fresh, c)
	}
	var open []engine.Payment
	q := s.DB().NewSelect().Model(&open).Where("provider = ? AND status = ? AND provider_id IS NOT NULL", payment.BankTransferProvider, engine.PaymentPending)
	ownAccounts := payment.OwnTransferAccounts(s.DB())
	if opt.Organisation != 0 {
		q = q.Where("order_id IN (?)", s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id = ?", opt.Organisation))
	} else {
		q = q.Where("order_id NOT IN (?)", s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id IN (?)", ownAccounts))
	}
	if err := q.Order("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load open bank transfers: %w", err)
	}
	partial, err := payment.PartialCapturesByReference(ctx, s.DB())
	if err != nil {
		return nil, err
	}
	expected := make([]banking.Expected, len(open))
	for i, p := range open {
		expected[i] = banking.Expected{Reference: banking.Reference(*p.ProviderID), AmountMinor: p.AmountMinor, Currency: p.Currency,
			PaidMinor: partial[*p.ProviderID+" "+p.Currency]}
	}
	proposals := banking.Match(fresh, expected)
	paid, err := s.paidTransfersNamed(ctx, opt.Organisation, proposals)
	if err != nil {
		return nil, err
	}
	var toKeep []keptLine
	keptAt := map[int]*BankCredit{} // rep.Lines' index of each credit to keep
	var (
		captures   []payment.Capture
		capturedAt []int // rep.Lines' index of each capture
	)
	for _, pr := range proposals {
		line := StatementLine{Credit: pr.Credit, Outcome: pr.Outcome, Reason: pr.Reason}
		if pr.Expected != nil {
			line.RF = pr.Expected.Reference
		}
		// A credit for an order paid already (before this import, or by an
		// earlier credit of this file) is a second payment: captured as
		// staff capture one by hand, so that it is owed back and listed,
		// not left as a credit no one can place.
		if rf := paidTransferNamed(paid, pr); rf != "" {
			pr.Outcome, pr.Expected = banking.OutcomeSecond, &banking.Expected{Reference: rf}
			line.Outcome, line.RF = banking.OutcomeSecond, rf
			line.Reason = fmt.Sprintf("%s is paid already: a second payment, owed back to the member", rf.String())
		}
		switch pr.Outcome {
		case banking.OutcomeSecond:
		case banking.OutcomeExact, banking.OutcomeByAmount, banking.OutcomePartial, banking.OutcomeExcess, banking.OutcomeCurrency:
		case banking.OutcomeDuplicate, banking.OutcomeUnknown:
			// Kept for a treasurer, unless it is the same credit listed
			// twice (overlapping statements): that money is counted once.
			// Kept after the loop, a batch per transaction (keepUnmatchedCredits).
			if !opt.DryRun && (pr.Outcome == banking.OutcomeUnknown || pr.Expected != nil) {
				keptAt[len(rep.Lines)] = s.storedCredit(st, opt, line)
			}
			rep.Lines = append(rep.Lines, line)
			continue
		default:
			rep.Lines = append(rep.Lines, line)
			continue
		}
		if opt.DryRun {
			rep.Lines = append(rep.Lines, line)
			continue
		}
		note := fmt.Sprintf("statement %s, credit %s", st.MessageID, pr.Credit.ID)
		if pr.Credit.DebtorName != "" {
			note += " from " + pr.Credit.DebtorName
		}
		if pr.Outcome == banking.OutcomeByAmount {
			note += "; matched by amount only (no usable reference)"
		}
		booked := pr.Credit.BookingDate
		if booked.IsZero() {
			booked = pr.Credit.ValueDate
		}
		capturedAt = append(capturedAt, len(rep.Lines))
		captures = append(captures, payment.Capture{Reference: string(pr.Expected.Reference), AmountMinor: pr.Credit.AmountMinor,
			Currency: pr.Credit.Currency, BookedOn: booked, Note: note,
			EventID: CreditEventID(opt.Organisation, string(opt.Account), creditIdentity(pr.Credit)),
			Actor:   opt.Actor, OrganisationID: opt.Organisation})
		rep.Lines = append(rep.Lines, line)
	}
	// Captured after the loop, a batch per transaction; a capture that
	// fails fails alone (payment.CapturePayments).
	results, errs := payment.Of(s.Service).CapturePayments(ctx, captures)
	for j, i := range capturedAt {
		line, res := &rep.Lines[i], results[j]
		if err := errs[j]; err != nil {
			line.Err = err
			s.Log.ErrorContext(ctx, "statement credit could not be captured", "credit", line.Credit.ID, "err", err)
			continue
		}
		// A credit on a payment that already has a problem is recorded too
		// (its event is stored), though it changes nothing more.
		line.Captured = !res.Replayed || res.Mismatch
		line.Completed = !res.Replayed && !res.Mismatch && !res.Stale && res.Outcome == engine.OutcomeSuccess
		line.SecondCredit = res.SecondCredit
	}
	if len(keptAt) > 0 {
		for i := range rep.Lines {
			if bc, ok := keptAt[i]; ok {
				toKeep = append(toKeep, keptLine{line: &rep.Lines[i], credit: bc})
			}
		}
		actor := engine.CommandLine
		if opt.Actor != nil {
			actor = *opt.Actor
		}
		s.keepUnmatchedCredits(ctx, toKeep, actor)
	}
	return rep, nil
}

// paidTransferNamed is the RF reference of a bank transfer paid in full
// that a credit names, when the credit is a second payment for it: an
// unknown credit whose reference is such a payment of the importing
// account's orders (paid, from paidTransfersNamed), or a credit for a
// payment an earlier credit of the same file paid. "" otherwise.
func paidTransferNamed(paid map[banking.Reference]bool, pr banking.Proposal) banking.Reference {
	switch {
	case pr.Outcome == banking.OutcomeDuplicate && pr.Expected != nil:
		return pr.Expected.Reference
	case pr.Outcome != banking.OutcomeUnknown || pr.Reference == "" || !paid[pr.Reference]:
		return ""
	}
	return pr.Reference
}

// paidTransfersNamed are the references among the unknown credits' that
// name a bank transfer of the importing account's orders paid in full,
// read once for the whole statement. A capture of this import pays only
// payments that were open (never an unknown credit's), so what it reads
// before the captures holds after them.
func (s *Service) paidTransfersNamed(ctx context.Context, orgID int64, proposals []banking.Proposal) (map[banking.Reference]bool, error) {
	var refs []string
	for _, pr := range proposals {
		if pr.Outcome == banking.OutcomeUnknown && pr.Reference != "" {
			refs = append(refs, string(pr.Reference))
		}
	}
	paid := map[banking.Reference]bool{}
	const chunk = 1000
	for from := 0; from < len(refs); from += chunk {
		var found []string
		q := s.DB().NewSelect().Model((*engine.Payment)(nil)).Column("provider_id").
			Where("provider = ? AND provider_id IN (?) AND status = ?", payment.BankTransferProvider, bun.List(refs[from:min(from+chunk, len(refs))]), engine.PaymentSucceeded)
		if orgID != 0 {
			q = q.Where("order_id IN (?)", s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id = ?", orgID))
		} else {
			q = q.Where("order_id NOT IN (?)", s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("organisation_id IN (?)", payment.OwnTransferAccounts(s.DB())))
		}
		if err := q.Scan(ctx, &found); err != nil {
			return nil, fmt.Errorf("load paid transfers: %w", err)
		}
		for _, r := range found {
			paid[banking.Reference(r)] = true
		}
	}
	return paid, nil
}

// recordedBeforeKeys tells which credits were recorded (captured, kept
// unmatched or assigned) before transaction keys from any file that
// reported the same transaction: by the records the migration
// bank_records_before_keys kept of them, matched on the account, the
// transaction's own AcctSvcrRef (banking.Credit.TransactionRef), amount,
// currency and booking date. A credit whose bank gives no
// transaction-level reference has nothing that stays the same across
// files but its amount and date, which two transfers may share; it is
// found only by the key it had in the same file (Credit.PreviousKey).
func recordedBeforeKeys(ctx context.Context, db bun.IDB, orgID int64, account string, credits []banking.Credit) (map[int]bool, error) {
	var refs []string
	for _, c := range credits {
		if c.TransactionRef != "" {
			refs = append(refs, c.TransactionRef)
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	var rows []struct {
		Ref      string `bun:"transaction_ref"`
		Amount   int64  `bun:"amount_minor"`
		Currency string `bun:"currency"`
		BookedOn string `bun:"booked_on"`
	}
	if err := db.NewSelect().Table("bank_records_before_keys").Column("transaction_ref", "amount_minor", "currency", "booked_on").
		Where("scope = ? AND transaction_ref IN (?)", CreditEventID(orgID, account, ""), bun.List(refs)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load credits recorded before transaction keys: %w", err)
	}
	out := make(map[int]bool)
	for i, c := range credits {
		booked := c.BookingDate
		if booked.IsZero() {
			booked = c.ValueDate
		}
		for _, r := range rows {
			if r.Ref == c.TransactionRef && r.Amount == c.AmountMinor && strings.EqualFold(r.Currency, c.Currency) &&
				!booked.IsZero() && r.BookedOn == booked.Format(time.DateOnly) {
				out[i] = true
			}
		}
	}
	return out, nil
}

// legacyImportedCredits tells which credits were captured before credit
// keys, when a capture's event id was "credit:" and the bank's id alone:
// such an event counts only for a payment of the importing organisation
// (or, for the shared account, of an organisation without an account of
// its own) and only for a credit no larger than the amount it recorded (a
// completing capture records the sum of the parts), so that neither
// another club's capture nor another entry under the same bank id is
// taken for this credit.
func (s *Service) legacyImportedCredits(ctx context.Context, orgID int64, credits []banking.Credit) (map[int]bool, error) {
	ids := make([]string, len(credits))
	for i, c := range credits {
		ids[i] = "credit:" + c.ID
	}
	var rows []struct {
		EventID  string `bun:"event_id"`
		Amount   int64  `bun:"amount_minor"`
		Currency string `bun:"currency"`
	}
	q := s.DB().NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		Join("JOIN orders AS o ON o.id = p.order_id").ColumnExpr("e.event_id, COALESCE(e.amount_minor, 0) AS amount_minor, COALESCE(e.currency, '') AS currency").
		Where("e.provider = ? AND e.event_id IN (?)", payment.BankTransferProvider, bun.List(ids))
	if orgID != 0 {
		q = q.Where("o.organisation_id = ?", orgID)
	} else {
		q = q.Where("o.organisation_id NOT IN (?)", payment.OwnTransferAccounts(s.DB()))
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load credits imported before keys: %w", err)
	}
	out := make(map[int]bool)
	for i, c := range credits {
		for _, r := range rows {
			if r.EventID == ids[i] && strings.EqualFold(r.Currency, c.Currency) && r.Amount >= c.AmountMinor {
				out[i] = true
			}
		}
	}
	return out, nil
}
