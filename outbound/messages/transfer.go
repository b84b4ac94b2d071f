package messages

import (
	"context"

	"portal/engine"
	"portal/engine/jobs"
	"portal/outbound/mail"
	"portal/views"
	"portal/views/mailview"
	"portal/views/transferview"
)

// transferRequest composes the request to pay a registration just
// committed by bank transfer: the account, the amount, the RF reference
// and the QR code (inline), and the pay link that shows them again. An
// order paid or cancelled meanwhile, or no longer paid by bank transfer,
// gets nothing (errSkip).
func transferRequest(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error) {
	// The attempt exists (the request is queued once it was made). The
	// payload has the payment link's shape: linkedOrder reads both.
	ctx, r, l, err := linkedOrder(ctx, d, msg, "transfer-request")
	if err != nil {
		return nil, err
	}
	transfer, err := transferOf(ctx, d, &r.Order)
	if err != nil {
		return nil, err
	}
	if transfer == nil {
		return nil, errSkip
	}
	total := l.Money(transfer.OwedMinor, r.Order.Currency)
	m := mailview.TransferRequestModel{Club: r.Organisation.Name, Period: r.Period.Name, Total: total,
		Subject:  l.T("mail_transfer_subject", map[string]any{"Club": r.Organisation.Name, "Total": total}),
		Link:     r.Link,
		Transfer: *transfer.Model}
	for _, person := range r.Persons {
		m.Persons = append(m.Persons, person.FirstName+" "+person.LastName)
	}
	out, err := envelope(ctx, d, r.Organisation, "", r.Recipients, m.Subject)
	if err != nil {
		return nil, err
	}
	out.Attachments = append(out.Attachments, transfer.QR)
	return withBodies(ctx, out, m, mailview.TransferRequestText, mailview.TransferRequest)
}

// owedTransfer is a bank transfer as an e-mail shows it.
type owedTransfer struct {
	Model *views.BankTransferModel
	// QR is the inline image of its QR code, which Model refers to.
	QR mail.Attachment
	// OwedMinor is the amount still owed (the order's currency).
	OwedMinor int64
}

// transferOf is the bank transfer an order still asks for, as an e-mail
// shows it; nil when the order is not paid by bank transfer (or the
// messages have no payment service).
func transferOf(ctx context.Context, d Deps, order *engine.Order) (*owedTransfer, error) {
	if d.Payments == nil {
		return nil, nil //nolint:nilnil // no payment service: the message links to the page only
	}
	due, err := d.Payments.BankTransferDue(ctx, order.ID)
	if err != nil || due == nil {
		return nil, err
	}
	m, qr, err := transferview.Mail(ctx, transferview.Due{Transfer: *due, TotalMinor: order.TotalMinor})
	if err != nil {
		return nil, jobs.Permanent(err)
	}
	return &owedTransfer{Model: m, QR: mail.Attachment{Name: qr.Name, ContentType: "image/png", Data: qr.PNG, ContentID: qr.ContentID}, OwedMinor: due.AmountMinor}, nil
}
