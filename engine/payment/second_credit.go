package payment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// secondCreditOutcome is the payment event outcome of a bank credit for an
// order its bank transfer had paid already.
const secondCreditOutcome = "second_credit"

// secondCredit records money that arrived by bank transfer for an order
// already paid by it (the member paid twice, or staff capture the same
// transfer under another id): a payment of its own, succeeded, whose money
// is owed back by hand (owe), listed for staff until they mark it paid
// back. Its event id is the capture's, stored once: the same capture
// again (the same credit id, or the same staff form sent twice) finds it
// and changes nothing. It runs in settle's transaction, the instance
// locked, so two copies of one capture cannot both get past the check.
func (s *Service) secondCredit(ctx context.Context, tx bun.Tx, paid *engine.Payment, order *engine.Order, c engine.PaymentConfirmation, res *PaymentResult, now time.Time) error {
	res.Outcome = engine.OutcomeSuccess
	var earlier []engine.PaymentEvent
	if err := tx.NewSelect().Model(&earlier).Where("provider = ? AND event_id = ?", paid.Provider, c.EventID).Limit(1).Scan(ctx); err != nil {
		return fmt.Errorf("look up capture %s: %w", c.EventID, err)
	}
	if len(earlier) == 1 {
		res.Replayed = true
		if earlier[0].Outcome == secondCreditOutcome { // this second credit, again
			res.SecondCredit, res.Stale, res.CreditReference = true, true, earlier[0].Reference
		}
		return nil // else the capture that paid the order, again
	}
	res.SecondCredit = true
	currency := strings.ToUpper(c.Currency)
	credit := &engine.Payment{OrderID: order.ID, Provider: paid.Provider, Reference: engine.NewReference("PR-"), AmountMinor: c.AmountMinor,
		Currency: currency, Status: engine.PaymentSucceeded, ProviderID: paid.ProviderID, PaidAmountMinor: &c.AmountMinor, PaidCurrency: &currency,
		CreatedAt: now, UpdatedAt: now}
	if c.TransactionID != "" {
		credit.TransactionID = &c.TransactionID
	}
	if _, err := tx.NewInsert().Model(credit).Exec(ctx); err != nil {
		if store.IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "this bank credit was recorded before on another payment")
		}
		return fmt.Errorf("record second credit: %w", err)
	}
	amount := c.AmountMinor
	ev := &engine.PaymentEvent{Provider: paid.Provider, EventID: &c.EventID, EventType: c.EventType, Reference: credit.Reference,
		Outcome: secondCreditOutcome, AmountMinor: &amount, Currency: &currency, CreatedAt: now,
		Note: strings.TrimPrefix(fmt.Sprintf("%s; a second payment: order already paid by %s, owed back", c.Note, paid.Reference), "; ")}
	if _, err := RecordPaymentEvent(ctx, tx, ev); err != nil {
		return err
	}
	if c.Actor != nil {
		res.audit = &confirmationAudit{payment: credit, order: order, orderBefore: order.Status, event: ev}
	}
	if err := engine.EmitPaymentEvent(ctx, tx, engine.EventPaymentSucceeded, credit, order, "", now); err != nil {
		return err
	}
	res.Stale, res.CreditReference, res.CapturedMinor = true, credit.Reference, c.AmountMinor
	return s.owe(ctx, tx, credit, order, now)
}
