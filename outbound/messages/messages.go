// Package messages turns outbox messages and scheduled work into e-mail:
// one job handler per message kind, which loads what the message is about
// from the engine, renders its text (text/template) and HTML (templ)
// alternatives from views, and hands it to a mail.Sender. It lives in
// handlers because, like an HTTP handler, it joins the engine to views and
// to the outside world.
package messages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a-h/templ"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/invitation"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/outbound/mail"
	"portal/relay/invitelink"
)

// Deps are what the message handlers need.
type Deps struct {
	DB     *bun.DB
	Sender mail.Sender
	// BaseURL is the portal's public address, for links.
	BaseURL string
	// HashSecret signs the hash links in messages (resume links) of
	// organisations without a secret of their own.
	HashSecret string
	// OpenHashSecret opens an organisation's own sealed hash secret; nil:
	// no organisation may have one (no session key).
	OpenHashSecret func(orgID int64, sealed string) (string, error)
	// UnsubscribeAddress receives List-Unsubscribe requests of reminders
	// (the sender's address); empty: no such header.
	UnsubscribeAddress string
	// Payments makes the checkout of a payment link sent after the commit
	// (the engine's Service); nil: those messages cannot be sent.
	Payments PaymentLinks
	// Invitations signs the links of invitation e-mails; nil: no session
	// key, and invitations cannot be sent.
	Invitations *invitelink.Signer
	Now         func() time.Time
	Logger      *slog.Logger
}

// PaymentLinks is the part of the engine the payment messages need: the
// checkout of a payment link sent after the commit, and the bank transfer
// an order still asks for (printed in the messages of organisations paid
// by bank transfer).
type PaymentLinks interface {
	PaymentLinkLater(ctx context.Context, p payment.PaymentLinkPayload) (*payment.PaymentLinkMessage, error)
	BankTransferDue(ctx context.Context, orderID int64) (*banking.Transfer, error)
}

// Register adds the handlers of every message kind to r.
func Register(r *jobs.Runner, d Deps) {
	if d.Now == nil {
		d.Now = clock.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	handle := func(kind engine.MessageKind, c composer) { r.Handle(string(kind), outbox(d, c)) }
	handle(payment.KindConfirmation, confirmation)
	handle(registration.KindResumeLink, resumeLink)
	handle(message.KindUnpaidReminder, unpaidReminder)
	handle(payment.KindPaymentLink, paymentLink)
	handle(directdebit.KindDebitReturned, debitReturned)
	handle(payment.KindTransferRequest, transferRequest)
	handle(directdebit.KindMandateNotice, mandateNotice)
	handle(message.KindWelcome, welcome)
	handle(message.KindExpiryReminder, expiryReminder)
	handle(message.KindRenewalPrompt, renewalPrompt)
	handle(invitation.KindInvitation, invitationMail)
	handle(privacy.KindDataRequest, dataRequest)
	handle(privacy.KindDataRequestDone, dataRequestDone)
}

// errSkip says a message is no longer due (a reminder of an order paid
// since it was queued).
var errSkip = errors.New("message no longer due")

// composer builds the e-mail of an outbox message.
type composer func(ctx context.Context, d Deps, msg *engine.OutboxMessage) (*mail.Message, error)

// outbox is the job handler delivering an outbox message composed by
// compose: once, since a message already marked sent is skipped, and with
// a Message-ID derived from its key, so that a retry after a delivery whose
// outcome was lost carries the same id.
func outbox(d Deps, compose composer) jobs.Handler {
	return func(ctx context.Context, j *jobs.Job) error {
		var p engine.OutboxJob
		if err := j.Decode(&p); err != nil {
			return err
		}
		msg, err := message.ByKey(ctx, d.DB, p.Message)
		if err != nil {
			if e, ok := engine.AsError(err); ok && e.Code == engine.CodeNotFound {
				return jobs.Permanent(err)
			}
			return err
		}
		if msg.SentAt != nil {
			return nil
		}
		m, err := compose(ctx, d, msg)
		if errors.Is(err, errSkip) {
			return nil // no longer due: the job is done, the message stays unsent
		}
		if err != nil {
			return err
		}
		if len(m.To) == 0 {
			return jobs.Permanent(errors.New("no recipient has an e-mail address"))
		}
		sum := sha256.Sum256([]byte(msg.DedupKey))
		m.ID = hex.EncodeToString(sum[:16])
		m.Date = d.Now()
		if err := d.Sender.Send(ctx, m); err != nil {
			return err
		}
		return message.MarkSent(ctx, d.DB, msg.ID, d.Now())
	}
}

// withBodies fills out's two alternatives from one model m, the plain
// text and the HTML, so that every message says the same in both.
func withBodies[M any](ctx context.Context, out *mail.Message, m M, text func(context.Context, M) (string, error), html func(M) templ.Component) (*mail.Message, error) {
	var err error
	if out.Text, err = text(ctx, m); err != nil {
		return nil, err
	}
	if out.HTML, err = render(ctx, html(m)); err != nil {
		return nil, err
	}
	return out, nil
}

// render renders a templ component to a string.
func render(ctx context.Context, c templ.Component) (string, error) {
	var b bytes.Buffer
	if err := c.Render(ctx, &b); err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	return b.String(), nil
}
