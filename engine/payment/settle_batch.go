package payment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/engine/internal/store"
)

// The batched settlement (issue 42): a collection run marked sent settles
// thousands of debits, and a statement import captures a thousand
// transfers. Settled one by one each costs some twenty statements (lock,
// event, payment, order, memberships, instance, confirmation, webhook
// events). SettleBatch settles a batch with one statement per kind, and
// SettleIn is a batch of one, so that there is one settlement: the rules
// for every outcome are settleLoaded's, and a plain success (an open
// attempt of an unpaid order paid exactly, its event new) is recorded and
// completed for the whole batch at once by the same code settleLoaded
// completes one with (complete).

// settleSlowlyKey in a context makes SettleBatch settle every confirmation
// through settleLoaded, one after the other: the settlement as it was
// before it was batched, which the tests compare the batched one with.
type settleSlowlyKey struct{}

// paidAttempt is a confirmation whose attempt succeeds, for complete.
type paidAttempt struct {
	c     engine.PaymentConfirmation
	p     *engine.Payment
	order *engine.Order
	res   *PaymentResult
}

// SettleBatch settles confirmations in the caller's transaction tx as
// SettleIn settles each, in order, filling results (one per confirmation):
// the same rows, events, messages, jobs and audit entries. Their attempts'
// instances are locked at once (in id order) and read with one query per
// kind; the plain successes among them are recorded, settled, announced
// and completed with one statement per kind; any other confirmation, and
// one for an attempt, order or registration an earlier one of the batch
// names, is settled on its own (settleLoaded), after reading again what
// the earlier ones changed. An error leaves tx to be rolled back: none of
// the batch is settled. It returns the superseded attempts the caller
// closes at the provider once tx commits.
func (s *Service) SettleBatch(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, confs []engine.PaymentConfirmation, results []*PaymentResult) ([]engine.Payment, error) {
	if len(confs) != len(results) {
		return nil, fmt.Errorf("settle batch: %d confirmations, %d results", len(confs), len(results))
	}
	for _, res := range results {
		res.audit = nil
	}
	return s.settleBatch(ctx, tx, provider, confs, results)
}

// audit writes the audit entries of the confirmations settled (by staff:
// Actor) among confs, after their change, so that each says what the
// order and the payment became ("Unpaid → Paid").
func (s *Service) audit(ctx context.Context, tx bun.Tx, confs []engine.PaymentConfirmation, results []*PaymentResult) error {
	for i, res := range results {
		if res.audit != nil && confs[i].Actor != nil {
			if err := s.auditConfirmation(ctx, tx, *confs[i].Actor, res.audit); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) settleBatch(ctx context.Context, tx bun.Tx, provider engine.PaymentProvider, confs []engine.PaymentConfirmation, results []*PaymentResult) ([]engine.Payment, error) {
	refs := make([]string, len(confs))
	for i, c := range confs {
		refs[i] = c.Reference
	}
	payments, orders, err := lockPayments(ctx, tx, refs)
	if err != nil {
		return nil, err
	}
	partly, err := partlyCapturedOrders(ctx, tx, confs, payments)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	var (
		closeAtProvider []engine.Payment
		plain           []int
		events          []*engine.PaymentEvent
		again           []int // naming what an earlier confirmation of the batch names: settled after it
		seen            = map[string]bool{}
	)
	for i, c := range confs {
		p, ok := payments[c.Reference]
		if !ok {
			return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
		}
		order := orders[p.OrderID]
		keys := []string{fmt.Sprint("payment:", p.ID), fmt.Sprint("order:", order.ID), fmt.Sprint("instance:", order.ProcessInstanceID)}
		if c.EventID != "" {
			keys = append(keys, "event:"+c.EventID)
		}
		named := false
		for _, k := range keys {
			named = named || seen[k]
			seen[k] = true
		}
		switch {
		case named:
			again = append(again, i)
		case ctx.Value(settleSlowlyKey{}) == nil && plainSuccess(provider, c, p, order, partly[order.ID]):
			res := results[i]
			res.Order, res.ProcessID, res.PeriodID, res.UserKey = order, order.ProcessInstanceID, order.PeriodID, order.UserKey
			if c.Accumulate {
				res.CapturedMinor = c.AmountMinor // accumulate's sum, with no earlier part
			}
			ev, _ := confirmationEvent(provider, c, p, now)
			plain, events = append(plain, i), append(events, ev)
		default:
			closed, err := s.settleLoaded(ctx, tx, provider, c, p, order, results[i])
			if err != nil {
				return nil, err
			}
			if err := s.audit(ctx, tx, confs[i:i+1], results[i:i+1]); err != nil {
				return nil, err
			}
			closeAtProvider = append(closeAtProvider, closed...)
		}
	}
	if len(plain) > 0 {
		inserted, err := recordPaymentEvents(ctx, tx, events)
		if err != nil {
			return nil, err
		}
		var paid []paidAttempt
		for j, i := range plain {
			c, res := confs[i], results[i]
			p := payments[c.Reference]
			res.Outcome = attemptOutcome(p)
			if !inserted[j] {
				res.Replayed = true // this event was settled before
				engine.AuditUnchanged(ctx)
				continue
			}
			if c.Actor != nil {
				res.audit = newConfirmationAudit(p, orders[p.OrderID], events[j])
			}
			paid = append(paid, paidAttempt{c: c, p: p, order: orders[p.OrderID], res: res})
		}
		closed, err := s.complete(ctx, tx, paid, now)
		if err != nil {
			return nil, err
		}
		closeAtProvider = append(closeAtProvider, closed...)
		// The batch's plain successes name attempts, orders and
		// registrations of their own: what one became, no other changes.
		for _, i := range plain {
			if err := s.audit(ctx, tx, confs[i:i+1], results[i:i+1]); err != nil {
				return nil, err
			}
		}
	}
	for _, i := range again {
		closed, err := s.settleBatch(ctx, tx, provider, confs[i:i+1], results[i:i+1])
		if err != nil {
			return nil, err
		}
		closeAtProvider = append(closeAtProvider, closed...)
	}
	return closeAtProvider, nil
}

// plainSuccess says whether settleLoaded would settle c by recording its
// event and, when the event is new, completing p (complete) and nothing
// else: a success of the exact amount for an open attempt without a
// problem, of an unpaid order, confirmed by an event with an id (which
// says whether it is new), and for a capture (Accumulate) an order with
// no earlier partial capture. Anything else is settleLoaded's.
func plainSuccess(provider engine.PaymentProvider, c engine.PaymentConfirmation, p *engine.Payment, order *engine.Order, partlyCaptured bool) bool {
	return checkAccount(provider, p) == nil && c.Outcome == engine.OutcomeSuccess && c.EventID != "" &&
		p.Status == engine.PaymentPending && p.Problem == "" && order.Status == engine.OrderUnpaid &&
		!amountMismatch(c, p) && !(c.Accumulate && partlyCaptured)
}

// checkAccount refuses a confirmation of another provider, or of another
// account, than the one that made the attempt: a confirmation of one
// account never settles an attempt made with another.
func checkAccount(provider engine.PaymentProvider, p *engine.Payment) error {
	if p.Provider != provider.Name() || p.Account != "" && accountOf(provider) != "" && p.Account != accountOf(provider) {
		return &engine.Error{Code: engine.CodeNotFound, Message: "payment not found", Err: errOtherAccount}
	}
	return nil
}

// amountMismatch says whether a confirmation's amount or currency is not
// its attempt's.
func amountMismatch(c engine.PaymentConfirmation, p *engine.Payment) bool {
	return c.AmountMinor != p.AmountMinor || !strings.EqualFold(c.Currency, p.Currency)
}

// confirmationEvent is the payment event that records c for attempt p,
// and the problem a paid amount that does not match it is ("" when none).
func confirmationEvent(provider engine.PaymentProvider, c engine.PaymentConfirmation, p *engine.Payment, now time.Time) (*engine.PaymentEvent, string) {
	ev := &engine.PaymentEvent{Provider: provider.Name(), EventType: c.EventType, Reference: p.Reference, Outcome: c.Outcome, Note: c.Note, CreatedAt: now}
	if ev.EventType == "" {
		ev.EventType = "retrieval"
	}
	if c.EventID != "" {
		ev.EventID = &c.EventID
	}
	if c.Outcome != engine.OutcomeSuccess && c.Outcome != engine.OutcomePending {
		return ev, ""
	}
	amount, currency := cmp.Or(c.OwnAmountMinor, c.AmountMinor), strings.ToUpper(c.Currency)
	ev.AmountMinor, ev.Currency = &amount, &currency
	if !amountMismatch(c, p) {
		return ev, ""
	}
	problem := fmt.Sprintf("amount mismatch: the provider reports %s, the attempt is for %s",
		engine.FormatMoney(c.AmountMinor, strings.ToUpper(c.Currency)), engine.FormatMoney(p.AmountMinor, p.Currency))
	ev.Note = strings.TrimPrefix(ev.Note+"; "+problem, "; ")
	return ev, problem
}

// lockPayments locks the instances whose orders the attempts refs pay,
// then loads the attempts (by reference) and their orders with their
// lines (by id), as LockPayment does for one. A reference no attempt has
// is missing from the map.
func lockPayments(ctx context.Context, tx bun.Tx, refs []string) (map[string]*engine.Payment, map[int64]*engine.Order, error) {
	if tx.Dialect().Name() == dialect.PG {
		var instances []int64
		if err := tx.NewSelect().Model((*engine.Order)(nil)).Column("process_instance_id").
			Where("id IN (?)", tx.NewSelect().Model((*engine.Payment)(nil)).Column("order_id").Where("reference IN (?)", bun.List(refs))).
			Scan(ctx, &instances); err != nil {
			return nil, nil, fmt.Errorf("load the payments' registrations: %w", err)
		}
		if err := store.LockInstances(ctx, tx, instances); err != nil {
			return nil, nil, err
		}
	}
	var ps []engine.Payment
	if err := tx.NewSelect().Model(&ps).Where("reference IN (?)", bun.List(refs)).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("load payments: %w", err)
	}
	payments := make(map[string]*engine.Payment, len(ps))
	orderIDs := make([]int64, 0, len(ps))
	for i := range ps {
		payments[ps[i].Reference] = &ps[i]
		orderIDs = append(orderIDs, ps[i].OrderID)
	}
	orders := make(map[int64]*engine.Order, len(orderIDs))
	if len(orderIDs) == 0 {
		return payments, orders, nil
	}
	var os []engine.Order
	if err := store.WithLines(tx.NewSelect().Model(&os).Where("?TableAlias.id IN (?)", bun.List(orderIDs))).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("load orders: %w", err)
	}
	for i := range os {
		orders[os[i].ID] = &os[i]
	}
	for _, p := range ps {
		if orders[p.OrderID] == nil {
			return nil, nil, engine.Errorf(engine.CodeNotFound, "order not found")
		}
	}
	return payments, orders, nil
}

// partlyCapturedOrders are the orders of the captures (Accumulate) among
// confs that have a partial capture recorded: accumulate adds those up.
func partlyCapturedOrders(ctx context.Context, tx bun.Tx, confs []engine.PaymentConfirmation, payments map[string]*engine.Payment) (map[int64]bool, error) {
	var orderIDs []int64
	for _, c := range confs {
		if p, ok := payments[c.Reference]; ok && c.Accumulate {
			orderIDs = append(orderIDs, p.OrderID)
		}
	}
	if len(orderIDs) == 0 {
		return nil, nil
	}
	var found []int64
	if err := tx.NewSelect().TableExpr("payment_events AS e").Join("JOIN payments AS p ON p.reference = e.reference").
		ColumnExpr("DISTINCT p.order_id").Where("e.event_type = ? AND e.outcome = ? AND p.order_id IN (?)", BankCaptureEvent, PartialCaptureOutcome, bun.List(orderIDs)).
		Scan(ctx, &found); err != nil {
		return nil, fmt.Errorf("look for partial captures: %w", err)
	}
	out := make(map[int64]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}

// recordPaymentEvents stores confirmations as RecordPaymentEvent stores
// each, with one statement; each has a provider event id, and inserted[i]
// is false for one seen before (or earlier in evs).
func recordPaymentEvents(ctx context.Context, tx bun.IDB, evs []*engine.PaymentEvent) ([]bool, error) {
	var ids []string
	if err := tx.NewInsert().Model(&evs).On("CONFLICT (provider, event_id) WHERE event_id IS NOT NULL DO NOTHING").
		Returning("event_id").Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("store payment events: %w", err)
	}
	fresh := make(map[string]bool, len(ids))
	for _, id := range ids {
		fresh[id] = true
	}
	inserted := make([]bool, len(evs))
	for i, ev := range evs {
		inserted[i] = fresh[*ev.EventID]
		fresh[*ev.EventID] = false // once
	}
	return inserted, nil
}

// complete settles attempts whose provider took the money as paid, as
// settleLoaded ends for one: each attempt succeeded and announced; an
// order paid by another attempt already, or cancelled, owes the money
// back; an unpaid one's other open attempts are closed (returned, to close
// at the provider) and the order is paid (activate).
func (s *Service) complete(ctx context.Context, tx bun.Tx, paid []paidAttempt, now time.Time) ([]engine.Payment, error) {
	if len(paid) == 0 {
		return nil, nil
	}
	if err := settleSucceeded(ctx, tx, paid, now); err != nil {
		return nil, err
	}
	announce := make([]engine.Emission, len(paid))
	for i, a := range paid {
		announce[i] = engine.PaymentEmission(engine.EventPaymentSucceeded, a.p, a.order, "")
	}
	if err := engine.EmitEvents(ctx, tx, announce, now); err != nil {
		return nil, err
	}
	var unpaid []paidAttempt
	for _, a := range paid {
		a.res.Outcome = engine.OutcomeSuccess
		if a.order.Status != engine.OrderUnpaid {
			// Paid by another attempt already (two tabs), or cancelled by a reset.
			a.res.Stale = true
			if err := s.owe(ctx, tx, a.p, a.order, now); err != nil {
				return nil, err
			}
			continue
		}
		unpaid = append(unpaid, a)
	}
	if len(unpaid) == 0 {
		return nil, nil
	}
	orderIDs, paymentIDs := make([]int64, len(unpaid)), make([]int64, len(unpaid))
	for i, a := range unpaid {
		orderIDs[i], paymentIDs[i] = a.order.ID, a.p.ID
	}
	var others []engine.Payment
	if err := tx.NewSelect().Model(&others).Where("order_id IN (?) AND status = ? AND id NOT IN (?)", bun.List(orderIDs), engine.PaymentPending, bun.List(paymentIDs)).
		Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load pending payment attempts: %w", err)
	}
	if len(others) > 0 {
		ids := make([]int64, len(others))
		for i, o := range others {
			ids[i] = o.ID
		}
		if _, err := tx.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", engine.PaymentCancelled).Set("updated_at = ?", now).
			Where("id IN (?) AND status = ?", bun.List(ids), engine.PaymentPending).Exec(ctx); err != nil {
			return nil, fmt.Errorf("cancel payment attempts: %w", err)
		}
	}
	return others, s.activate(ctx, tx, unpaid, now)
}

// settleSucceeded records attempts' success, with what the provider said
// was paid, as SettlePayment does for one: each changes only from the
// status it was read with (under the instance lock).
func settleSucceeded(ctx context.Context, tx bun.Tx, paid []paidAttempt, now time.Time) error {
	var status, txID, amount, currency strings.Builder
	var statusArgs, txArgs, amountArgs, currencyArgs []any
	ids := make([]int64, len(paid))
	for i, a := range paid {
		ids[i] = a.p.ID
		status.WriteString(" WHEN ? THEN ?")
		statusArgs = append(statusArgs, a.p.ID, a.p.Status)
		if a.c.TransactionID != "" {
			txID.WriteString(" WHEN ? THEN ?")
			txArgs = append(txArgs, a.p.ID, a.c.TransactionID)
		}
		amount.WriteString(" WHEN ? THEN ?")
		amountArgs = append(amountArgs, a.p.ID, a.c.AmountMinor)
		currency.WriteString(" WHEN ? THEN ?")
		currencyArgs = append(currencyArgs, a.p.ID, a.c.Currency)
	}
	q := tx.NewUpdate().Model((*engine.Payment)(nil)).Set("status = ?", engine.PaymentSucceeded).Set("updated_at = ?", now).
		Set("paid_amount_minor = CASE id"+amount.String()+" END", amountArgs...).
		Set("paid_currency = CASE id"+currency.String()+" END", currencyArgs...).
		Where("id IN (?)", bun.List(ids)).Where("status = CASE id"+status.String()+" END", statusArgs...)
	if len(txArgs) > 0 {
		q = q.Set("transaction_id = CASE id"+txID.String()+" ELSE transaction_id END", txArgs...)
	}
	r, err := q.Exec(ctx)
	if err != nil {
		if store.IsUniqueViolation(err) {
			return engine.Errorf(engine.CodeConflict, "this payment transaction was already used")
		}
		return fmt.Errorf("settle payments: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n != int64(len(paid)) {
		// Under the instance locks nobody else can settle them; this is a bug.
		return fmt.Errorf("settle %d payments: %d rows changed", len(paid), n)
	}
	for _, a := range paid {
		a.p.Status = engine.PaymentSucceeded
	}
	return nil
}

// activate marks paid orders' registrations complete and queues their
// confirmations: each order paid, its memberships active (announced), its
// instance COMPLETED and one confirmation queued to its members.
func (s *Service) activate(ctx context.Context, tx bun.Tx, paid []paidAttempt, now time.Time) error {
	orderIDs, instanceIDs := make([]int64, len(paid)), make([]int64, len(paid))
	for i, a := range paid {
		orderIDs[i], instanceIDs[i] = a.order.ID, a.order.ProcessInstanceID
	}
	if err := store.MarkOrdersPaid(ctx, tx, orderIDs, now); err != nil {
		return err
	}
	activated, err := store.ActivatePendingMembershipsOf(ctx, tx, instanceIDs, now)
	if err != nil {
		return err
	}
	var announce []engine.Emission
	for _, a := range paid {
		order := a.order
		order.Status, order.PaidAt = engine.OrderPaid, &now
		ms := activated[order.ProcessInstanceID]
		if len(ms) == 0 {
			continue
		}
		data := engine.MembershipEventData{RegistrationID: order.ProcessInstanceID, OrderID: order.ID, PeriodID: order.PeriodID,
			UserKey: order.UserKey, Memberships: make([]engine.ActivatedMembership, len(ms))}
		for i, m := range ms {
			data.Memberships[i] = engine.ActivatedMembership{MembershipID: m.ID, PersonID: m.PersonID, MembershipTypeID: m.MembershipTypeID,
				MemberType: m.MemberType, ActivatedAt: now.UTC().Truncate(time.Millisecond)}
		}
		announce = append(announce, engine.Emission{OrganisationID: order.OrganisationID, Type: engine.EventMembershipActivated, Data: data})
	}
	if err := engine.EmitEvents(ctx, tx, announce, now); err != nil {
		return err
	}
	if err := store.CompleteInstances(ctx, tx, instanceIDs, now); err != nil {
		return err
	}
	members, err := store.ActiveMembersOfEach(ctx, tx, instanceIDs)
	if err != nil {
		return err
	}
	// One confirmation per time the order is paid: after a returned
	// direct debit took the payment back, paying again confirms again.
	var returns []struct {
		OrderID int64 `bun:"order_id"`
		N       int   `bun:"n"`
	}
	if err := tx.NewSelect().Model((*Debit)(nil)).ColumnExpr("order_id, COUNT(*) AS n").
		Where("order_id IN (?) AND status = ?", bun.List(orderIDs), DebitReturned).Group("order_id").Scan(ctx, &returns); err != nil {
		return fmt.Errorf("count returned debits: %w", err)
	}
	returned := make(map[int64]int, len(returns))
	for _, r := range returns {
		returned[r.OrderID] = r.N
	}
	msgs := make([]*engine.OutboxMessage, len(paid))
	for i, a := range paid {
		order := a.order
		persons := members[order.ProcessInstanceID]
		names := make([]string, len(persons))
		recipient := ""
		for i, p := range persons {
			names[i] = p.FirstName + " " + p.LastName
			if recipient == "" && p.Email != "" {
				recipient = p.Email
			}
		}
		payload, err := json.Marshal(map[string]any{
			"orderId": order.ID, "userKey": order.UserKey, "periodId": order.PeriodID,
			"persons": names, "total": engine.FormatMoney(order.TotalMinor, order.Currency),
		})
		if err != nil {
			return fmt.Errorf("confirmation payload: %w", err)
		}
		dedup := fmt.Sprintf("%s:order:%d", KindConfirmation, order.ID)
		if n := returned[order.ID]; n > 0 {
			dedup += fmt.Sprintf(":after-return:%d", n)
		}
		msgs[i] = &engine.OutboxMessage{Kind: KindConfirmation, DedupKey: dedup, Recipient: recipient, Payload: string(payload), CreatedAt: now}
	}
	return store.QueueMessages(ctx, tx, msgs)
}
