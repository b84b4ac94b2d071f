package payment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
)

// BankTransferProvider is the name of the bank-transfer provider
// (engine/banktransfer) on stored payments. The engine knows it because
// staff capture and the statement import settle only its attempts.
const BankTransferProvider = "bank_transfer"

// Capture is money staff saw arrive on the bank account for a payment by
// bank transfer.
type Capture struct {
	// Reference names the payment: its RF creditor reference (spaces and
	// case as people write it), the order's payment reference (PO-…) or
	// the attempt's (PR-…).
	Reference string
	// AmountMinor and Currency are what arrived; Currency "" is the
	// payment's own.
	AmountMinor int64
	Currency    string
	// BookedOn is the booking date on the statement; zero: today in the
	// club's time zone (engine.Organisation.TimeZone).
	BookedOn time.Time
	// Note is free text for the record (who captured it, why).
	Note string
	// ID identifies the capture once: a capture with an ID seen before
	// (for the same organisation) changes nothing. It is recorded as
	// "capture:", the organisation and the ID, so that it never stands for
	// a bank's credit nor another club's capture. A capture by hand
	// without one is identified by the reference, date and amount, so
	// that running the same command twice captures once.
	ID string
	// eventID is set by the statement import and credit assignment: the
	// bank credit's own event id (bankstatement.CreditEventID), used as is.
	EventID string
	// Actor is the staff member capturing on the staff pages (audited);
	// nil from the command line.
	Actor *engine.Actor
	// OrganisationID, when not 0, limits the capture to that
	// organisation's payments: staff capture for their own club only.
	OrganisationID int64
}

// CaptureResult is what a capture did.
type CaptureResult struct {
	PaymentResult
	// RF is the payment's creditor reference; Expected what it asked for.
	RF            banking.Reference
	ExpectedMinor int64
	Currency      string
	// Problem is "" when the amount (with the order's earlier partial
	// captures) was exactly the payment's; "partial" while it is less
	// (recorded, the payment stays open for the rest); "excess" or
	// "currency": recorded on the payment for staff, nothing completed.
	Problem string
}

// BankCaptureEvent is the payment event type of a capture.
const BankCaptureEvent = "bank_transfer.capture"

// CapturePayment records money that arrived by bank transfer and settles
// its payment exactly as an online payment settles (settle): the exact
// amount completes the registration (order paid, memberships active, the
// process COMPLETED, one confirmation queued), all in one transaction with
// the record of the capture, whose ID is stored once. Members who pay in
// parts are added up: a capture short of the amount is recorded as
// partial and leaves the payment open, and the one that brings the sum to
// the amount completes it. An excess amount, or another currency, is
// recorded on the payment as its problem and never completes anything;
// staff settle it with the member.
func (s *Service) CapturePayment(ctx context.Context, c Capture) (_ *CaptureResult, err error) {
	pc, err := s.prepareCapture(ctx, c)
	if err != nil {
		return nil, err
	}
	res, err := s.settle(ctx, pc.provider, pc.conf)
	if err != nil {
		return nil, err
	}
	return s.captureResult(ctx, pc, res), nil
}

// preparedCapture is a capture with its attempt and the confirmation that
// settles it.
type preparedCapture struct {
	c        Capture
	p        *engine.Payment
	orgID    int64
	rf       banking.Reference
	currency string
	conf     engine.PaymentConfirmation
	provider engine.PaymentProvider
}

// prepareCapture finds a capture's attempt and makes its confirmation.
func (s *Service) prepareCapture(ctx context.Context, c Capture) (*preparedCapture, error) {
	if c.AmountMinor <= 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "the amount captured must be more than zero")
	}
	p, err := s.BankAttempt(ctx, c.Reference)
	if err != nil {
		return nil, err
	}
	orgID := s.OrgOfOrder(ctx, p.OrderID)
	if c.OrganisationID != 0 && orgID != c.OrganisationID {
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	currency := strings.ToUpper(strings.TrimSpace(c.Currency))
	if currency == "" {
		currency = p.Currency
	}
	if len(currency) != 3 {
		return nil, engine.Errorf(engine.CodeInvalid, "currency %q: want a three-letter ISO 4217 code such as EUR", c.Currency)
	}
	rf := banking.Reference(*p.ProviderID)
	booked := c.BookedOn
	if booked.IsZero() {
		// Today is the club's day where it is: a capture at 00:30 in
		// Berlin is booked on that day, not on UTC's day before.
		booked = s.Clock().In(engine.OrganisationLocation(ctx, s.DB(), orgID))
	}
	var id string
	switch {
	case c.EventID != "":
		id = c.EventID
	case c.ID != "":
		id = fmt.Sprintf("capture:%d:%s", orgID, c.ID)
	default:
		id = fmt.Sprintf("manual:%s:%s:%s", rf, booked.Format(time.DateOnly), engine.FormatMoney(c.AmountMinor, currency))
	}
	note := "booked " + booked.Format(time.DateOnly)
	if n := strings.TrimSpace(c.Note); n != "" {
		note += "; " + n
	}
	conf := engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeSuccess, AmountMinor: c.AmountMinor, Currency: currency,
		EventID: id, EventType: BankCaptureEvent, TransactionID: id, Note: note, Accumulate: true, Actor: c.Actor}
	provider := s.ProviderForMethod(orgID, BankTransferProvider)
	if provider.Name() != BankTransferProvider {
		// Bank transfer switched off since the member was asked to pay:
		// the money still arrived and counts.
		provider = manualTransfers{}
	}
	return &preparedCapture{c: c, p: p, orgID: orgID, rf: rf, currency: currency, conf: conf, provider: provider}, nil
}

// captureResult is what a settled capture did.
func (s *Service) captureResult(ctx context.Context, pc *preparedCapture, res *PaymentResult) *CaptureResult {
	c, p, rf, currency := pc.c, pc.p, pc.rf, pc.currency
	out := &CaptureResult{PaymentResult: *res, RF: rf, ExpectedMinor: p.AmountMinor, Currency: p.Currency}
	if res.SecondCredit {
		// The order was paid already: nothing to add up, the money is
		// owed back (res.Stale), whatever its amount.
		if !res.Replayed {
			s.Log.WarnContext(ctx, "a second bank credit for an order already paid; it is owed back to the member",
				"rf", string(rf), "credit", res.CreditReference, "amount", engine.FormatMoney(c.AmountMinor, currency))
		}
		return out
	}
	if res.Replayed && !res.Mismatch && p.Status == engine.PaymentSucceeded && p.Problem == "" {
		// The same capture again after the payment was completed (the
		// completing form sent twice): it changed nothing, and the state it
		// finds is paid, not the part this capture brought.
		out.CapturedMinor = p.AmountMinor
		return out
	}
	if out.CapturedMinor == 0 { // not added up (another currency, a payment settled before)
		out.CapturedMinor = c.AmountMinor
	}
	switch {
	case currency != p.Currency:
		out.Problem = "currency"
	case res.Partial || out.CapturedMinor < p.AmountMinor:
		out.Problem = "partial"
	case out.CapturedMinor > p.AmountMinor:
		out.Problem = "excess"
	}
	if out.Problem != "" {
		s.Log.WarnContext(ctx, "bank transfer captured with a problem; the registration is not completed",
			"rf", string(rf), "problem", out.Problem, "paid", engine.FormatMoney(out.CapturedMinor, currency), "expected", engine.FormatMoney(p.AmountMinor, p.Currency))
	}
	return out
}

// captureBatch is how many captures CapturePayments settles in one
// transaction.
const captureBatch = 100

// CapturePayments captures as CapturePayment captures each, in order, and
// returns each one's result or error: the statement import's captures.
// The captures of one organisation settle a batch per transaction
// (SettleBatch); a capture is never lost with another's: a batch that
// fails is captured again one by one, each in its own transaction as
// CapturePayment does, so that only the failing capture fails. A capture
// naming an order an earlier one of the call names is captured on its own
// after the batches, having read what the earlier one changed.
func (s *Service) CapturePayments(ctx context.Context, cs []Capture) ([]*CaptureResult, []error) {
	results, errs := make([]*CaptureResult, len(cs)), make([]error, len(cs))
	if engine.InAudit(ctx) {
		// A pending audit entry or step belongs to one transaction.
		for i, c := range cs {
			results[i], errs[i] = s.CapturePayment(ctx, c)
		}
		return results, errs
	}
	prepared := make([]*preparedCapture, len(cs))
	var (
		alone   []int
		batches [][]int
		orders  = map[int64]bool{}
	)
	for i, c := range cs {
		pc, err := s.prepareCapture(ctx, c)
		if err != nil {
			errs[i] = err
			continue
		}
		if orders[pc.p.OrderID] {
			alone = append(alone, i)
			continue
		}
		orders[pc.p.OrderID] = true
		prepared[i] = pc
		if n := len(batches); n > 0 && len(batches[n-1]) < captureBatch && prepared[batches[n-1][0]].orgID == pc.orgID {
			batches[n-1] = append(batches[n-1], i)
		} else {
			batches = append(batches, []int{i})
		}
	}
	for _, batch := range batches {
		settled, err := s.settleCaptures(ctx, prepared, batch)
		if err != nil {
			s.Log.WarnContext(ctx, "a batch of captures failed; capturing them one by one", "captures", len(batch), "err", err)
			alone = append(alone, batch...)
			continue
		}
		for j, i := range batch {
			results[i] = s.captureResult(ctx, prepared[i], settled[j])
		}
	}
	slices.Sort(alone)
	for _, i := range alone {
		results[i], errs[i] = s.CapturePayment(ctx, cs[i])
	}
	return results, errs
}

// settleCaptures settles the prepared captures batch (of one organisation)
// in one transaction, and closes their superseded checkouts once it
// commits, as settle does for one.
func (s *Service) settleCaptures(ctx context.Context, prepared []*preparedCapture, batch []int) ([]*PaymentResult, error) {
	provider := prepared[batch[0]].provider
	confs, results := make([]engine.PaymentConfirmation, len(batch)), make([]*PaymentResult, len(batch))
	var closeAtProvider []engine.Payment
	err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) (err error) {
		for j, i := range batch {
			confs[j], results[j] = prepared[i].conf, &PaymentResult{Reference: prepared[i].conf.Reference} // a retried transaction starts over
		}
		closeAtProvider, err = s.SettleBatch(ctx, tx, provider, confs, results)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(closeAtProvider) > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterSettleTimeout)
		defer cancel()
		for _, o := range closeAtProvider {
			if err := provider.Expire(ctx, o); err != nil {
				s.Log.WarnContext(ctx, "a superseded checkout could not be closed at the provider", "reference", o.Reference, "err", err)
			}
		}
	}
	return results, nil
}

// OrgOfOrder is an order's organisation (0 when it cannot be read: the
// default provider then).
func (s *Service) OrgOfOrder(ctx context.Context, orderID int64) int64 {
	o, err := store.LoadOrder(ctx, s.DB(), orderID)
	if err != nil {
		return 0
	}
	return o.OrganisationID
}

// BankAttempt finds the bank-transfer attempt a reference names: the
// newest attempt with that RF reference (an order's attempts share it),
// the newest attempt of an order by its payment reference, or an attempt
// by its own reference.
func (s *Service) BankAttempt(ctx context.Context, reference string) (*engine.Payment, error) {
	ref := strings.TrimSpace(reference)
	var p *engine.Payment
	switch {
	case strings.HasPrefix(strings.ToUpper(ref), "RF"):
		rf, err := banking.ParseReference(ref)
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "%s", err.Error())
		}
		var ps []engine.Payment
		if err := s.DB().NewSelect().Model(&ps).Where("provider = ? AND provider_id = ?", BankTransferProvider, string(rf)).
			Order("id DESC").Limit(1).Scan(ctx); err != nil {
			return nil, fmt.Errorf("load the payment of %s: %w", rf, err)
		}
		if len(ps) == 0 {
			return nil, engine.Errorf(engine.CodeNotFound, "no bank transfer has the reference %s", rf.String())
		}
		p = &ps[0]
	case strings.HasPrefix(ref, "PO-"):
		order, err := orderByPayReference(ctx, s.DB(), ref)
		if err != nil {
			return nil, err
		}
		if p, err = lastPayment(ctx, s.DB(), order.ID); err != nil {
			return nil, err
		}
		if p == nil {
			return nil, engine.Errorf(engine.CodeNotFound, "order %s has no payment yet", ref)
		}
	default:
		var err error
		if p, err = paymentByReference(ctx, s.DB(), ref); err != nil {
			return nil, err
		}
	}
	if !engine.InScope(ctx, s.OrgOfOrder(ctx, p.OrderID)) { // another organisation's payment reads as none (engine/organisations.go)
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	if p.Provider != BankTransferProvider || p.ProviderID == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "payment %s is not a bank transfer (it is paid with %s)", ref, p.Provider)
	}
	return p, nil
}

// manualTransfers stands in for the bank-transfer provider when it is no
// longer configured: settling needs its name, and it has nothing to close.
type manualTransfers struct{}

func (manualTransfers) Name() string { return BankTransferProvider }
func (manualTransfers) CreateCheckout(context.Context, engine.CheckoutRequest) (engine.Checkout, error) {
	return engine.Checkout{}, errors.New("bank transfer is not configured")
}
func (manualTransfers) Retrieve(_ context.Context, p engine.Payment) (engine.PaymentConfirmation, error) {
	return engine.PaymentConfirmation{Reference: p.Reference, Outcome: engine.OutcomeOpen}, nil
}
func (manualTransfers) Expire(context.Context, engine.Payment) error { return nil }
func (manualTransfers) Refund(context.Context, engine.RefundRequest) (string, error) {
	return "", ErrManualRefund
}

// ProviderFor is the payment provider of an organisation, for the pages
// that show a provider's own checkout (bank transfer).
func (s *Service) ProviderFor(organisationID int64) engine.PaymentProvider {
	return s.providerFor(organisationID)
}

// PartialCaptureOutcome is the payment event outcome of a capture short of
// the amount, which later captures add to.
const PartialCaptureOutcome = "partial"

// OutcomePartial is the outcome of the payment event of a capture short
// of the amount owed (partialCaptureOutcome): the staff pages tell it
// apart from a capture that completes the payment.
const OutcomePartial engine.PaymentOutcome = PartialCaptureOutcome

// accumulate adds a capture to the earlier partial captures of its order,
// in settle's transaction (the instance is locked). Short of the amount,
// the capture is recorded as partial and the attempt stays open (partial
// true); otherwise c's amount becomes the sum, which settle checks as
// usual (exact: completed; more: an excess for staff).
func (s *Service) accumulate(ctx context.Context, tx bun.Tx, p *engine.Payment, order *engine.Order, c *engine.PaymentConfirmation, res *PaymentResult, now time.Time) (bool, error) {
	if p.Status != engine.PaymentPending || p.Problem != "" || !strings.EqualFold(c.Currency, p.Currency) {
		return false, nil
	}
	prior, err := partialCapturedMinor(ctx, tx, order.ID, p.Currency, c.EventID)
	if err != nil {
		return false, err
	}
	total := prior + c.AmountMinor
	res.CapturedMinor = total
	if total >= p.AmountMinor {
		if prior > 0 {
			c.Note += fmt.Sprintf("; with earlier partial payments of %s", engine.FormatMoney(prior, p.Currency))
			c.OwnAmountMinor, c.AmountMinor = c.AmountMinor, total
		}
		return false, nil
	}
	amount, currency := c.AmountMinor, p.Currency
	ev := &engine.PaymentEvent{Provider: p.Provider, EventID: &c.EventID, EventType: c.EventType, Reference: p.Reference,
		Outcome: PartialCaptureOutcome, AmountMinor: &amount, Currency: &currency, CreatedAt: now,
		Note: fmt.Sprintf("%s; partial: %s of %s so far", c.Note, engine.FormatMoney(total, currency), engine.FormatMoney(p.AmountMinor, currency))}
	inserted, err := RecordPaymentEvent(ctx, tx, ev)
	if err != nil {
		return false, err
	}
	res.Outcome, res.Partial, res.Replayed = attemptOutcome(p), true, !inserted
	if !inserted {
		engine.AuditUnchanged(ctx)
		return true, nil
	}
	if c.Actor != nil {
		// A part from a statement a treasurer imports is audited as a
		// whole payment is (settle's auditConfirmation).
		res.audit = newConfirmationAudit(p, order, ev)
	}
	return true, nil
}

// PartialCapturesByReference adds up the partial captures of the bank
// transfers, keyed by RF reference (one per order) and currency: what
// Match counts as paid already.
func PartialCapturesByReference(ctx context.Context, db bun.IDB) (map[string]int64, error) {
	var rows []struct {
		RF       string `bun:"rf"`
		Currency string `bun:"currency"`
		Sum      int64  `bun:"sum"`
	}
	if err := db.NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		ColumnExpr("p.provider_id AS rf, e.currency AS currency, SUM(e.amount_minor) AS sum").
		Where("e.event_type = ? AND e.outcome = ? AND p.provider = ?", BankCaptureEvent, PartialCaptureOutcome, BankTransferProvider).
		GroupExpr("p.provider_id, e.currency").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load partial captures: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.RF+" "+r.Currency] = r.Sum
	}
	return out, nil
}

// OwnTransferAccounts selects the organisations that take bank transfers
// to an account of their own (as their provider or one of their methods):
// the shared account's import leaves their payments alone.
func OwnTransferAccounts(db bun.IDB) *bun.SelectQuery {
	return db.NewSelect().Model((*PaymentSettings)(nil)).Column("organisation_id").
		Where("(provider = ? OR methods LIKE ?) AND bank_iban <> ''", BankTransferProvider, "%"+BankTransferProvider+"%")
}
