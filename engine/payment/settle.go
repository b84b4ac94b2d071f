package payment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// KindConfirmation is the outbox message (and job) kind of the
// confirmation after payment.
const KindConfirmation engine.MessageKind = "membership_confirmation"

// PaymentResult is what a confirmation did, and the attempt's state after it.
type PaymentResult struct {
	// Outcome is the attempt's state: success, failed, cancelled, pending
	// (an asynchronous payment confirms later) or open (not paid yet).
	Outcome  engine.PaymentOutcome
	Replayed bool // the confirmation was seen before or came too late: nothing changed
	Stale    bool // the order was paid by another attempt or cancelled (reset): this payment is refunded
	Mismatch bool // the amount or currency did not match the attempt: recorded for staff, nothing completed
	// Partial: a bank transfer's capture that, with the earlier ones,
	// is still less than the attempt's amount: recorded, the attempt stays
	// open. CapturedMinor is what its order's captures add up to.
	Partial       bool
	CapturedMinor int64
	// SecondCredit: a bank transfer's capture for an order it had paid
	// already, recorded as a payment of its own (CreditReference) whose
	// money is owed back by hand (Stale is set too).
	SecondCredit    bool
	CreditReference string
	Reference       string
	ProcessID       int64
	PeriodID        int64
	UserKey         string
	Order           *engine.Order
	// audit is the staff confirmation SettleIn writes to the audit log
	// once its change is made (auditConfirmation), nil when none.
	audit *confirmationAudit
}

// attemptOutcome is the outcome an attempt's stored state stands for.
func attemptOutcome(p *engine.Payment) engine.PaymentOutcome {
	switch p.Status {
	case engine.PaymentSucceeded:
		return engine.OutcomeSuccess
	case engine.PaymentFailed:
		return engine.OutcomeFailed
	case engine.PaymentCancelled:
		return engine.OutcomeCancelled
	}
	if p.ConfirmingAt != nil {
		return engine.OutcomePending
	}
	return engine.OutcomeOpen
}

// CompletePayment applies a browser's return from the provider. The query
// is never trusted: a provider with a signed return (the test gateway)
// verifies it; for any other the return only shows what its webhook
// established, or, while the attempt is still pending, what a retrieval
// from the provider's API says.
func (s *Service) CompletePayment(ctx context.Context, ret engine.PaymentReturn) (_ *PaymentResult, err error) {
	view, err := s.PaymentForPage(ctx, ret.Reference)
	if err != nil {
		return nil, err
	}
	provider := s.ProviderOf(view.Order.OrganisationID, &view.Payment)
	if v, ok := provider.(engine.ReturnVerifier); ok && provider.Name() == view.Payment.Provider {
		c, err := v.VerifyReturn(ctx, ret)
		if err != nil {
			if errors.Is(err, engine.ErrForgedReturn) {
				return nil, engine.Errorf(engine.CodeInvalid, "this payment confirmation could not be verified")
			}
			return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "the payment provider could not be reached; try again shortly", Err: err}
		}
		return s.settle(ctx, provider, c)
	}
	return s.refreshPayment(ctx, provider, &view.Payment)
}

// PaymentState is the attempt's state as the portal knows it, retrieving
// it from the provider while it is pending (the confirming page polls it).
func (s *Service) PaymentState(ctx context.Context, reference string) (_ *PaymentResult, err error) {
	view, err := s.PaymentForPage(ctx, reference)
	if err != nil {
		return nil, err
	}
	return s.refreshPayment(ctx, s.ProviderOf(view.Order.OrganisationID, &view.Payment), &view.Payment)
}

// refreshPayment asks the provider about a pending attempt and settles what
// it says; a provider that cannot be reached leaves the state as it is.
func (s *Service) refreshPayment(ctx context.Context, provider engine.PaymentProvider, p *engine.Payment) (*PaymentResult, error) {
	if p.Status == engine.PaymentPending && provider.Name() == p.Provider {
		c, err := provider.Retrieve(ctx, *p)
		if err == nil && c.Outcome != engine.OutcomeOpen {
			c.Reference = p.Reference // the retrieval was for this attempt, whatever it echoes
			return s.settle(ctx, provider, c)
		}
		if err != nil {
			s.Log.WarnContext(ctx, "payment state could not be retrieved from the provider", "reference", p.Reference, "err", err)
		}
	}
	return s.currentResult(ctx, p.Reference)
}

// currentResult is an attempt's state without any change.
func (s *Service) currentResult(ctx context.Context, reference string) (*PaymentResult, error) {
	view, err := s.PaymentForPage(ctx, reference)
	if err != nil {
		return nil, err
	}
	o := view.Order
	return &PaymentResult{Outcome: attemptOutcome(&view.Payment), Replayed: true, Reference: reference, Order: o,
		ProcessID: o.ProcessInstanceID, PeriodID: o.PeriodID, UserKey: o.UserKey,
		Stale: view.Payment.Status == engine.PaymentSucceeded && view.Payment.RefundStatus != "", Mismatch: view.Payment.Problem != ""}, nil
}

// ReceivePaymentEvent handles a provider's signed event (a webhook) sent
// for the environment's account (PORTAL_STRIPE_...): it verifies the
// signature, stores the event id once and settles the attempt the event
// names, in one transaction. Only attempts of organisations that pay
// through the environment's provider are settled by it: an event of one
// account never settles an attempt made with another. A nil result with
// no error is an event the portal does not act on. A forged event is
// invalid; an event for an attempt the portal does not know is not found.
func (s *Service) ReceivePaymentEvent(ctx context.Context, providerName string, payload []byte, signature string) (_ *PaymentResult, err error) {
	return s.receiveEvent(ctx, s.Payments, 0, providerName, payload, signature)
}

// ReceiveOrganisationPaymentEvent is ReceivePaymentEvent for the account
// of an organisation's own payment settings (its own webhook address): the
// signature is checked with its webhook secret, and only its attempts are
// settled. An organisation without a provider of its own that takes
// events is not found.
func (s *Service) ReceiveOrganisationPaymentEvent(ctx context.Context, orgID int64, providerName string, payload []byte, signature string) (_ *PaymentResult, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	ctx = engine.WithOrganisation(ctx, orgID)
	// Its current webhook secret first, then the earlier ones: an event of
	// a checkout made before the organisation changed its keys is signed
	// with the secret of that account's endpoint.
	// One webhook secret may serve several accounts' keys (a rolled API key
	// keeps its endpoint): an attempt of another account than the one
	// verifying tries the next.
	var failed error
	for _, provider := range s.eventProviders(orgID) {
		res, err := s.receiveEvent(ctx, provider, orgID, providerName, payload, signature)
		if errors.Is(err, engine.ErrForgedEvent) || errors.Is(err, errOtherAccount) {
			if failed == nil || errors.Is(err, errOtherAccount) {
				failed = err
			}
			continue
		}
		return res, err
	}
	if failed != nil {
		return nil, failed
	}
	return nil, engine.Errorf(engine.CodeNotFound, "no payment provider %q takes events here", providerName)
}

// receiveEvent verifies an event with provider's keys and settles it;
// orgID 0 is the environment's account.
func (s *Service) receiveEvent(ctx context.Context, provider engine.PaymentProvider, orgID int64, providerName string, payload []byte, signature string) (*PaymentResult, error) {
	parser, ok := provider.(engine.EventParser)
	if !ok || provider.Name() != providerName {
		return nil, engine.Errorf(engine.CodeNotFound, "no payment provider %q takes events here", providerName)
	}
	c, err := parser.ParseEvent(payload, signature)
	if err != nil {
		if errors.Is(err, engine.ErrForgedEvent) {
			return nil, &engine.Error{Code: engine.CodeInvalid, Message: "the payment event could not be verified", Err: engine.ErrForgedEvent}
		}
		return nil, engine.Errorf(engine.CodeInvalid, "the payment event could not be read")
	}
	if c == nil {
		return nil, nil //nolint:nilnil // an event of a kind the portal does not act on
	}
	view, err := s.PaymentForPage(ctx, c.Reference)
	if err != nil {
		return nil, err
	}
	if orgID == 0 && s.providerFor(view.Order.OrganisationID) != s.Payments || orgID != 0 && view.Order.OrganisationID != orgID {
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found for this account")
	}
	return s.settle(ctx, provider, *c)
}

// errOtherAccount is settle's refusal of a confirmation verified by another
// account than the one that made the attempt.
var errOtherAccount = errors.New("the attempt was made with another account")

// settle applies a verified confirmation to its attempt, in one transaction
// with the record of the confirmation (a provider event id once).
// Settling is idempotent and monotonic: a succeeded attempt never changes
// again here, a failed or cancelled one only to succeeded (the provider took the
// money after all), and a duplicate or late event changes nothing. (The
// one way back from succeeded is a returned direct debit, which the
// statement import applies: debit_returns.go; its attempt stays failed.)
//
// success for an unpaid order: the order is paid, the memberships active,
// the instance COMPLETED, one confirmation queued, the order's other open
// checkouts closed. success for an order paid by another attempt, or
// cancelled by a reset: the money is refunded through the provider by a
// job queued in the same transaction, or owed by hand for a bank transfer.
// Amount or currency other than the attempt's: recorded and logged, and
// the attempt never completes anything.
func (s *Service) settle(ctx context.Context, provider engine.PaymentProvider, c engine.PaymentConfirmation) (*PaymentResult, error) {
	res := &PaymentResult{Reference: c.Reference}
	var closeAtProvider []engine.Payment
	// A staff capture's audit entry (engine/audit.go) is written unless it was a
	// replay: the same capture again is not audited twice.
	err := engine.InTx(ctx, s.DB(), s.AuditedTx(func(ctx context.Context, tx bun.Tx) (err error) { // audit.go: a staff capture's entry, if any
		if closeAtProvider, err = s.SettleIn(ctx, tx, provider, c, res); err != nil {
			return err
		}
		if res.Replayed && !res.Mismatch {
			engine.AuditUnchanged(ctx)
			return nil
		}
		if res.Order != nil {
			order, err := store.LoadOrder(ctx, tx, res.Order.ID)
			if err != nil {
				return err
			}
			engine.AuditChangedTo(ctx, "order_status", order.Status)
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	if len(closeAtProvider) == 0 {
		return res, nil
	}
	// The settlement is committed; closing the superseded checkouts is owed
	// to the provider whatever the caller does now (a webhook's sender
	// hanging up), and bounded, so that the webhook still answers in
	// Stripe's time. (A refund is a job: owe.)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterSettleTimeout)
	defer cancel()
	for _, o := range closeAtProvider {
		if err := provider.Expire(ctx, o); err != nil {
			s.Log.WarnContext(ctx, "a superseded checkout could not be closed at the provider", "reference", o.Reference, "err", err)
		}
	}
	return res, nil
}

// SettleIn is settle's change in the caller's transaction tx, filling
// res: SettleBatch of one confirmation. It returns the superseded attempts
// the caller closes at the provider once tx commits.
func (s *Service) SettleIn(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, c engine.PaymentConfirmation, res *PaymentResult) ([]engine.Payment, error) {
	return s.SettleBatch(ctx, tx, provider, []engine.PaymentConfirmation{c}, []*PaymentResult{res})
}

// settleLoaded is the settlement of one confirmation c whose attempt p and
// order the caller loaded under their instance's lock (SettleBatch): every
// rule of settle, for every outcome. SettleBatch settles a plain success
// (plainSuccess) of a batch without it, with one statement per kind; its
// completion (complete) is the same for both.
func (s *Service) settleLoaded(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, c engine.PaymentConfirmation, p *engine.Payment, order *engine.Order, res *PaymentResult) ([]engine.Payment, error) {
	if err := checkAccount(provider, p); err != nil {
		return nil, err
	}
	res.Order, res.ProcessID, res.PeriodID, res.UserKey = order, order.ProcessInstanceID, order.PeriodID, order.UserKey
	now := s.Clock()
	if c.Accumulate && c.Outcome == engine.OutcomeSuccess && p.Status == engine.PaymentSucceeded {
		return nil, s.secondCredit(ctx, tx, p, order, c, res, now)
	}
	if c.Accumulate {
		partial, err := s.accumulate(ctx, tx, p, order, &c, res, now)
		if err != nil || partial {
			return nil, err
		}
	}
	ev, problem := confirmationEvent(provider, c, p, now)
	paid := c.Outcome == engine.OutcomeSuccess || c.Outcome == engine.OutcomePending
	mismatch := paid && amountMismatch(c, p)
	inserted, err := RecordPaymentEvent(ctx, tx, ev)
	if err != nil {
		return nil, err
	}
	res.Outcome = attemptOutcome(p)
	if !inserted {
		res.Replayed = true // this event was settled before
		engine.AuditUnchanged(ctx)
		return nil, nil
	}
	if c.Actor != nil {
		res.audit = newConfirmationAudit(p, order, ev)
	}
	switch {
	case p.Problem != "":
		res.Replayed, res.Mismatch = true, true
		return nil, nil
	case mismatch:
		res.Mismatch = true
		p.Problem = problem
		s.Log.ErrorContext(ctx, "payment confirmation does not match its attempt; not completing the registration (staff to check)",
			"reference", p.Reference, "order", order.ID, "paid", engine.FormatMoney(c.AmountMinor, c.Currency),
			"expected", engine.FormatMoney(p.AmountMinor, p.Currency), "event", c.EventID)
		if err := UpdatePayment(ctx, tx, p, "problem", "updated_at"); err != nil {
			return nil, err
		}
		if p.Status == engine.PaymentPending {
			// Closed, so that the member can pay the right amount with a new checkout.
			if err := SettlePayment(ctx, tx, p, engine.PaymentFailed, engine.PaymentConfirmation{}, now); err != nil {
				return nil, err
			}
			if err := engine.EmitPaymentFailed(ctx, tx, p, order, engine.OutcomeFailed, problem, now); err != nil {
				return nil, err
			}
		}
		res.Outcome = attemptOutcome(p)
		return nil, nil
	case c.Outcome == engine.OutcomeOpen:
		return nil, nil
	case c.Outcome == engine.OutcomePending:
		if p.Status == engine.PaymentPending && p.ConfirmingAt == nil {
			p.ConfirmingAt, p.UpdatedAt = &now, now
			if err := UpdatePayment(ctx, tx, p, "confirming_at", "updated_at"); err != nil {
				return nil, err
			}
		} else {
			res.Replayed = true // late: the attempt was decided already
		}
		res.Outcome = attemptOutcome(p)
		return nil, nil
	case c.Outcome != engine.OutcomeSuccess:
		if p.Status != engine.PaymentPending {
			res.Replayed = true // never back from succeeded, and closed stays closed
			return nil, nil
		}
		status := map[engine.PaymentOutcome]engine.PaymentStatus{engine.OutcomeFailed: engine.PaymentFailed, engine.OutcomeCancelled: engine.PaymentCancelled}[c.Outcome]
		if status == "" {
			return nil, fmt.Errorf("settle payment %s: unknown outcome %q", p.Reference, c.Outcome)
		}
		if err := SettlePayment(ctx, tx, p, status, c, now); err != nil {
			return nil, err
		}
		if err := engine.EmitPaymentFailed(ctx, tx, p, order, c.Outcome, "", now); err != nil {
			return nil, err
		}
		res.Outcome = attemptOutcome(p)
		return nil, nil
	}
	if p.Status == engine.PaymentSucceeded {
		res.Replayed = true
		return nil, nil
	}
	if returned, err := debitReturnedFor(ctx, tx, p); err != nil || returned {
		// The bank gave a returned debit's money back: a later success
		// (its run marked sent after the return) changes nothing.
		res.Replayed = returned
		return nil, err
	}
	// The provider took the money, even for an attempt we had closed
	// (the member cancelled, a reset, an expiry): it counts.
	return s.complete(ctx, tx, []paidAttempt{{c: c, p: p, order: order, res: res}}, now)
}

// afterSettleTimeout bounds the provider calls that follow a settlement.
const afterSettleTimeout = 10 * time.Second

// LockPayment loads a payment attempt and its order, after locking their
// process instance. Reset takes the instance first too, so a payment return
// and a reset of the same registration queue up instead of deadlocking, and
// what is read here is what the other committed. (SQLite runs one
// transaction at a time: it needs no lock.)
func LockPayment(ctx context.Context, tx bun.Tx, reference string) (*engine.Payment, *engine.Order, error) {
	instanceID, err := instanceOfPayment(ctx, tx, reference)
	if err != nil {
		return nil, nil, err
	}
	if err := store.LockInstance(ctx, tx, instanceID); err != nil {
		return nil, nil, err
	}
	p, err := paymentByReference(ctx, tx, reference)
	if err != nil {
		return nil, nil, err
	}
	order, err := store.LoadOrder(ctx, tx, p.OrderID)
	if err != nil {
		return nil, nil, err
	}
	return p, order, nil
}

// confirmationAudit is a payment confirmed by staff (a bank transfer
// captured on the staff pages or from a statement they import) as it was
// before the confirmation: the audit entry says what it became.
type confirmationAudit struct {
	payment       *engine.Payment
	paymentBefore engine.PaymentStatus
	order         *engine.Order
	orderBefore   engine.OrderStatus
	event         *engine.PaymentEvent
}

func newConfirmationAudit(p *engine.Payment, order *engine.Order, ev *engine.PaymentEvent) *confirmationAudit {
	return &confirmationAudit{payment: p, paymentBefore: p.Status, order: order, orderBefore: order.Status, event: ev}
}

// auditConfirmation writes a payment confirmed by staff to the audit log,
// in the transaction that records it, once the change is made: the
// payment's and the order's status before and after ("Unpaid → Paid"),
// and what arrived (event, outcome, amount, note).
func (s *Service) auditConfirmation(ctx context.Context, tx bun.IDB, actor engine.Actor, a *confirmationAudit) error {
	order, err := store.LoadOrder(ctx, tx, a.order.ID)
	if err != nil {
		return err
	}
	var paymentAfter engine.PaymentStatus
	if err := tx.NewSelect().Model((*engine.Payment)(nil)).Column("status").Where("id = ?", a.payment.ID).Scan(ctx, &paymentAfter); err != nil {
		return fmt.Errorf("payment status for the audit log: %w", err)
	}
	ev := a.event
	after := map[string]any{"reference": a.payment.Reference, "event": ev.EventType, "outcome": ev.Outcome, "note": ev.Note,
		"payment_status": string(paymentAfter), "order_status": string(order.Status)}
	if ev.AmountMinor != nil && ev.Currency != nil {
		after["amount"] = engine.FormatMoney(*ev.AmountMinor, *ev.Currency)
	}
	before := map[string]any{"order_status": string(a.orderBefore)}
	if a.paymentBefore != "" { // a second credit's payment is new
		before["payment_status"] = string(a.paymentBefore)
	}
	instance := order.ProcessInstanceID
	return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: order.OrganisationID, Action: "payment.capture",
		TargetType: "registration", TargetID: fmt.Sprint(instance), InstanceID: &instance, Before: before, After: after})
}
