package directdebit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/message"
	"portal/engine/payment"
)

// The mandate e-mail (issue 29): when a mandate is given, kept for an
// order or its account changed, the member is sent one message that
// confirms the mandate (the signed mandate attached as a PDF) and is the
// debit's pre-notification: amount, due date, mandate reference and the
// creditor's identifier. It is queued in the transaction of the change.

// KindMandateNotice is the mandate e-mail.
const KindMandateNotice engine.MessageKind = "mandate_notice"

// What brought a mandate e-mail (MandateNoticePayload.Event).
const (
	MandateGiven   = "given"
	MandateKept    = "kept"
	MandateAmended = "amended"
)

// MandateNoticePayload names what a mandate e-mail announces: the order
// collected under the mandate on DueOn (YYYY-MM-DD), and the mandate's
// account as of its change at AmendedAtMilli (0: never changed); Event
// says what the member did (MandateGiven, MandateKept, MandateAmended).
type MandateNoticePayload struct {
	Event          string `json:"event"`
	OrderID        int64  `json:"orderId"`
	MandateID      int64  `json:"mandateId"`
	DueOn          string `json:"dueOn"`
	AmendedAtMilli int64  `json:"amendedAtMilli,omitempty"`
}

// queueMandateNotice queues the mandate e-mail of order collected under m
// on due, in the transaction of the change. Its key names the order, the
// mandate, the due date and the account change, so a retry sends it once
// and each change that tells the member something new is told.
func queueMandateNotice(ctx context.Context, tx bun.IDB, event string, m *DebitMandate, orderID int64, due, now time.Time) error {
	p := MandateNoticePayload{Event: event, OrderID: orderID, MandateID: m.ID, DueOn: due.Format(time.DateOnly)}
	key := fmt.Sprintf("%s:order:%d:mandate:%d:due:%s", KindMandateNotice, orderID, m.ID, p.DueOn)
	if m.AmendedAt != nil {
		p.AmendedAtMilli = m.AmendedAt.UnixMilli()
		key += fmt.Sprintf(":amended:%d", p.AmendedAtMilli)
	}
	payload, _ := json.Marshal(p)
	return store.QueueMessage(ctx, tx, &engine.OutboxMessage{Kind: KindMandateNotice, DedupKey: key, Payload: string(payload), CreatedAt: now.UTC()})
}

// MandateNotice is what a mandate e-mail says. Due is false when there is
// nothing to send any more: the order was paid or cancelled, is no longer
// collected under the mandate on that date, the mandate ended, or its
// account changed again (that change has its own message).
type MandateNotice struct {
	message.UnpaidReminder
	Event   string // MandateGiven, MandateKept or MandateAmended
	Mandate DebitMandate
	// CreditorName is the club's name as creditor (its account's holder).
	CreditorName string
	DueOn        time.Time
}

// LoadMandateNotice gathers the mandate e-mail of an outbox message.
func LoadMandateNotice(ctx context.Context, db bun.IDB, msg *engine.OutboxMessage) (*MandateNotice, error) {
	var p MandateNoticePayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID == 0 || p.MandateID == 0 {
		return nil, engine.Errorf(engine.CodeValidation, "outbox message %d: bad mandate e-mail payload", msg.ID)
	}
	r, err := message.LoadUnpaidReminder(ctx, db, message.UnpaidReminderPayload{OrderID: p.OrderID})
	if err != nil {
		return nil, err
	}
	n := &MandateNotice{UnpaidReminder: *r, Event: p.Event}
	if !r.Due {
		return n, nil
	}
	n.Due = false
	if err := db.NewSelect().Model(&n.Mandate).Where("id = ?", p.MandateID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "mandate")
	}
	o := r.Order
	amended := int64(0)
	if n.Mandate.AmendedAt != nil {
		amended = n.Mandate.AmendedAt.UnixMilli()
	}
	if o.DebitMandateID == nil || *o.DebitMandateID != p.MandateID || o.DebitDueOn == nil ||
		o.DebitDueOn.Format(time.DateOnly) != p.DueOn || n.Mandate.RevokedAt != nil || amended != p.AmendedAtMilli {
		return n, nil
	}
	ps, err := payment.LoadPaymentSettings(ctx, db, o.OrganisationID)
	if err != nil {
		return nil, err
	}
	n.Due, n.CreditorName, n.DueOn = true, ps.BankCreditorName, *o.DebitDueOn
	if n.CreditorName == "" {
		n.CreditorName = r.Organisation.Name
	}
	return n, nil
}
