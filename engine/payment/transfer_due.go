package payment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/internal/store"
)

// KindTransferRequest is the message sent when a registration paid by
// bank transfer is committed: the transfer to make (account, amount,
// reference, QR code), so that the member has it at hand when the done
// page is closed.
const KindTransferRequest engine.MessageKind = "transfer_request"

// TransferRequestPayload names the order of a transfer-request message.
type TransferRequestPayload struct {
	OrderID int64 `json:"orderId"`
}

// transferAccount is a provider paid by bank transfer
// (engine/banktransfer): the account members transfer to.
type transferAccount interface {
	Creditor() banking.Creditor
}

// BankTransferDue is the bank transfer an unpaid order still asks for: its
// organisation's account, the amount still owed (the order's total less
// the parts that arrived already) and the RF reference of its attempts.
// It is nil when the order is not (or no longer) waiting for a bank
// transfer: paid, cancelled, paid another way, or without an attempt yet.
// The pay page and every e-mail that asks for the transfer show this one
// answer, so that they never disagree.
func (s *Service) BankTransferDue(ctx context.Context, orderID int64) (_ *banking.Transfer, err error) {
	order, err := store.LoadOrder(ctx, s.DB(), orderID)
	if err != nil {
		return nil, err
	}
	if !engine.InScope(ctx, order.OrganisationID) {
		return nil, engine.Errorf(engine.CodeNotFound, "order not found")
	}
	if order.Status != engine.OrderUnpaid {
		return nil, nil //nolint:nilnil // nothing is owed
	}
	last, err := lastPayment(ctx, s.DB(), order.ID)
	if err != nil || last == nil || last.Provider != BankTransferProvider || last.ProviderID == nil {
		return nil, err
	}
	// The bank-transfer method's provider, which need not be the default
	// one when the club offers several methods.
	account, ok := s.ProviderForMethod(order.OrganisationID, BankTransferProvider).(transferAccount)
	if !ok {
		// Bank transfer was switched off after the member was asked to
		// transfer: there is no account to print any more.
		return nil, nil //nolint:nilnil // not paid by bank transfer now
	}
	rf, err := banking.ParseReference(*last.ProviderID)
	if err != nil {
		return nil, fmt.Errorf("payment %s: %w", last.Reference, err)
	}
	paid, err := partialCapturedMinor(ctx, s.DB(), order.ID, last.Currency, "")
	if err != nil {
		return nil, err
	}
	owed := last.AmountMinor - paid
	if owed <= 0 {
		return nil, nil //nolint:nilnil // the parts add up; the capture that completes it is under way
	}
	return &banking.Transfer{Creditor: account.Creditor(), AmountMinor: owed, Currency: last.Currency, Reference: rf}, nil
}

// partialCapturedMinor adds up the partial captures of an order's bank
// transfers in a currency, leaving out the event exceptEventID (the
// capture being added).
func partialCapturedMinor(ctx context.Context, db bun.IDB, orderID int64, currency, exceptEventID string) (int64, error) {
	var sum int64
	if err := db.NewSelect().Model((*engine.PaymentEvent)(nil)).ColumnExpr("COALESCE(SUM(amount_minor), 0)").
		Where("event_type = ? AND outcome = ? AND currency = ?", BankCaptureEvent, PartialCaptureOutcome, currency).
		Where("reference IN (?)", db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").Where("order_id = ?", orderID)).
		Where("event_id <> ?", exceptEventID).
		Scan(ctx, &sum); err != nil {
		return 0, fmt.Errorf("add up partial captures: %w", err)
	}
	return sum, nil
}

// queueTransferRequest queues the transfer-request message of a just
// committed order whose first attempt is a bank transfer; once per order.
// A failure is logged only: the done page shows the transfer, and the
// unpaid reminders repeat it.
func (s *Service) queueTransferRequest(ctx context.Context, order *engine.Order, p *engine.Payment) {
	if p.Provider != BankTransferProvider {
		return
	}
	payload, _ := json.Marshal(TransferRequestPayload{OrderID: order.ID})
	msg := &engine.OutboxMessage{Kind: KindTransferRequest, DedupKey: fmt.Sprintf("%s:order:%d", KindTransferRequest, order.ID),
		Payload: string(payload), CreatedAt: s.Clock().UTC()}
	if err := store.QueueMessageNow(ctx, s.DB(), msg); err != nil {
		s.Log.ErrorContext(ctx, "the bank transfer request could not be queued", "order", order.ID, "err", err)
	}
}
