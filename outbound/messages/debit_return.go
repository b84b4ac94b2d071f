package messages

import (
	"context"
	"encoding/json"
	"fmt"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/directdebit"
	"portal/engine/jobs"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
)

// debitReturned composes the message about a direct debit the member's
// bank returned (engine/directdebit/debit_returns.go), in the member's language: the
// bank's reason in words, the amount that came back, the club's return
// fee, what the order owes now, and the stable pay link, where the member
// confirms the mandate again, gives another account or chooses another
// way to pay. An order paid or cancelled since gets nothing (errSkip).
func debitReturned(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	var p directdebit.DebitReturnPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID == 0 || p.Link == "" {
		return nil, jobs.Permanent(fmt.Errorf("outbox message %d: bad debit return payload", msg.ID))
	}
	r, err := directdebit.LoadDebitReturnMessage(ctx, d.DB, p)
	if err != nil {
		return nil, permanentIfFinal(err)
	}
	if !r.Due {
		return nil, errSkip
	}
	l := memberLanguage(r.Language, r.Organisation.DefaultLanguage)
	ctx = lang.With(ctx, l)
	m := mailview.DebitReturnModel{Club: r.Organisation.Name, Subject: l.T("mail_return_subject", map[string]any{"Club": r.Organisation.Name}),
		Period: r.Period.Name, Reason: banking.ReturnReasonText(p.ReasonCode, l.Code), Returned: l.Money(p.ReturnedMinor, r.Order.Currency),
		Total: l.Money(r.Order.TotalMinor, r.Order.Currency), Link: p.Link, MandateEnded: p.MandateEnded}
	if p.FeeMinor > 0 {
		m.Fee = l.Money(p.FeeMinor, r.Order.Currency)
	}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	out, err := envelope(ctx, d, r.Organisation, "", r.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	return withBodies(ctx, out, m, mailview.DebitReturnText, mailview.DebitReturn)
}
