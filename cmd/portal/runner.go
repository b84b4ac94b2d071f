package main

import (
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/directdebit"
	"portal/engine/jobs"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/privacy"
	"portal/engine/registration"
	"portal/engine/webhook"
	"portal/handlers/server"
	"portal/outbound/mail"
	"portal/outbound/messages"
	"portal/outbound/webhooks"
)

// keepSucceededJobs is how long finished jobs stay, with their dedup keys:
// longer than any deduplicated work is enqueued again (a replayed payment
// return, a schedule's period).
const keepSucceededJobs = 30 * 24 * time.Hour

// devMailFrom is the sender while no PORTAL_MAIL_FROM is set (mail goes
// to the log then).
const devMailFrom = "Registration portal <portal@localhost>"

// buildMailer is where e-mail goes: the SMTP server of PORTAL_SMTP_URL, or
// the log: with its text on a loopback base URL (`make run`), without it
// anywhere else (a deployment's log must not hold members' mail).
func buildMailer(cfg config.Config, log *slog.Logger) (mail.Sender, error) {
	from := cfg.MailFrom
	if from.Address == "" {
		from, _ = mail.ParseFrom(devMailFrom)
	}
	if cfg.SMTPURL == nil {
		return mail.Log{Logger: log, From: from, Texts: baseURLIsLoopback(cfg.BaseURL)}, nil
	}
	mc := mail.Config{URL: cfg.SMTPURL, From: from}
	if cfg.DKIMKey != nil {
		domain := cfg.DKIMDomain
		if domain == "" {
			domain = from.Address[strings.LastIndexByte(from.Address, '@')+1:]
		}
		mc.DKIM = &mail.DKIM{Domain: domain, Selector: cfg.DKIMSelector, Key: cfg.DKIMKey}
	}
	return mail.NewSMTP(mc)
}

// buildRunner is the job runner of serve with every job kind's handler.
func buildRunner(cfg config.Config, db *bun.DB, svc *engine.Service, log *slog.Logger, metrics *server.Metrics, sender mail.Sender) *jobs.Runner {
	metrics.WatchJobs(db)
	r := jobs.New(db, jobs.Config{Workers: cfg.JobWorkers, Logger: log, Observer: metrics})
	r.KeepSucceeded(keepSucceededJobs)
	from := cfg.MailFrom.Address
	if from == "" {
		f, _ := mail.ParseFrom(devMailFrom)
		from = f.Address
	}
	messages.Register(r, messages.Deps{DB: db, Sender: sender, BaseURL: cfg.BaseURL, HashSecret: cfg.HashSecret, UnsubscribeAddress: from,
		OpenHashSecret: openHashSecret(cfg), Payments: payment.Of(svc), Invitations: invitationSigner(cfg), Logger: log})
	webhooks.Register(r, webhooks.Deps{Engine: webhook.Of(svc), AllowPrivate: baseURLIsLoopback(cfg.BaseURL), AllowNetworks: cfg.WebhookAllowNetworks, Logger: log})
	registration.ScheduleLifecycle(r, db, cfg.ArchiveMode, clock.Now, log)
	message.ScheduleMessages(r, db, clock.Now, log)
	webhook.ScheduleWebhookPruning(r, db, time.Duration(cfg.WebhookRetentionDays)*24*time.Hour, clock.Now, log)
	payment.Of(svc).SchedulePayments(r, clock.Now)
	directdebit.Of(svc).ScheduleDebitRuns(r)
	privacy.Of(svc).ScheduleRetention(r, clock.Now, log)
	directdebit.Of(svc).ScheduleMandateExpiry(r, clock.Now, log)
	books.ScheduleCheck(r, svc, clock.Now, log)
	return r
}

// openHashSecret opens an organisation's own hash secret for the links in
// messages, as the server does for the links it checks; nil without a
// session key (then no organisation has one).
func openHashSecret(cfg config.Config) func(orgID int64, sealed string) (string, error) {
	sealer := hashSecretSealer(cfg)
	if sealer == nil {
		return nil
	}
	return func(orgID int64, sealed string) (string, error) {
		pt, err := sealer.Open(sealed, server.HashSecretAAD(orgID))
		return string(pt), err
	}
}

// baseURLIsLoopback reports whether the portal runs on a loopback address
// (tests, development): then webhook endpoints on private and loopback
// addresses are allowed.
func baseURLIsLoopback(base string) bool {
	u, err := url.Parse(base)
	return err == nil && webhook.IsLoopbackHost(u.Hostname())
}

// webhookOptions are the engine's webhook settings: a portal on a loopback
// address may have endpoints on loopback and private addresses too, and
// any portal on the networks PORTAL_WEBHOOK_ALLOW_NETWORKS names.
func webhookOptions(cfg config.Config) []engine.ServiceOption {
	opts := []engine.ServiceOption{engine.WithWebhookNetworks(cfg.WebhookAllowNetworks)}
	if baseURLIsLoopback(cfg.BaseURL) {
		opts = append(opts, engine.WithPrivateWebhookAddresses())
	}
	return opts
}
