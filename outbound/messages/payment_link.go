package messages

import (
	"context"
	"encoding/json"
	"fmt"

	"portal/engine"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/outbound/mail"
	"portal/views/lang"
	"portal/views/mailview"
)

// paymentLink composes the e-mail with the stable pay link of an order
// whose payment could not be created at commit ("payment generation
// failed"). The engine makes the checkout first: while the provider is
// still down the job fails and retries, so the member never gets a link
// that cannot be paid yet. An order paid or cancelled meanwhile gets
// nothing (errSkip).
func paymentLink(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	ctx, r, l, err := linkedOrder(ctx, d, msg, "payment-link")
	if err != nil {
		return nil, err
	}
	m := mailview.PaymentLinkModel{Club: r.Organisation.Name, Subject: l.T("mail_paylink_subject", map[string]any{"Club": r.Organisation.Name}),
		Period: r.Period.Name, Total: l.Money(r.Order.TotalMinor, r.Order.Currency), Link: r.Link}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	transfer, err := transferOf(ctx, d, &r.Order)
	if err != nil {
		return nil, err
	}
	if transfer != nil {
		m.Transfer, m.Total = transfer.Model, l.Money(transfer.OwedMinor, r.Order.Currency)
	}
	out, err := envelope(ctx, d, r.Organisation, "", r.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	if transfer != nil {
		out.Attachments = append(out.Attachments, transfer.QR)
	}
	return withBodies(ctx, out, m, mailview.PaymentLinkText, mailview.PaymentLink)
}

// linkedOrder reads the order of a message whose payload names one (the
// payment link, the transfer request) with its stable pay link, through
// PaymentLinkLater, which makes the checkout first if there is none: an
// order paid or cancelled meanwhile gets nothing (errSkip). ctx comes back
// in the member's language, l.
func linkedOrder(ctx context.Context, d Deps, msg *engine.OutboxMessage, kind string) (context.Context, *payment.PaymentLinkMessage, lang.Language, error) {
	var p payment.PaymentLinkPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID == 0 {
		return ctx, nil, lang.Language{}, jobs.Permanent(fmt.Errorf("outbox message %d: bad %s payload", msg.ID, kind))
	}
	if d.Payments == nil {
		return ctx, nil, lang.Language{}, jobs.Permanent(fmt.Errorf("outbox message %d: no payment service for the %s", msg.ID, kind))
	}
	r, err := d.Payments.PaymentLinkLater(ctx, p)
	if err != nil {
		return ctx, nil, lang.Language{}, permanentIfFinal(err)
	}
	if !r.Due {
		return ctx, nil, lang.Language{}, errSkip
	}
	l := memberLanguage(r.Language, r.Organisation.DefaultLanguage)
	return lang.With(ctx, l), r, l, nil
}
