package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"portal/engine/payment/settings"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/banking"
	"portal/engine/bankstatement"
	"portal/engine/banktransfer"
	"portal/engine/directdebit"
	"portal/engine/payment"
	"portal/engine/payproviders"
	"portal/engine/stripepay"
	"portal/handlers/server"
	"portal/migrations"
)

// paymentProvider builds the configured payment provider (validated by
// ValidatePayments), and the test gateway when it is the one or when
// organisations may choose it (TestPaymentsAllowed), whose pages the HTTP
// layer serves.
func paymentProvider(cfg config.Config) (engine.PaymentProvider, *payment.TestGateway, error) {
	var gw *payment.TestGateway
	if cfg.TestPaymentsAllowed() {
		// Relative addresses: the test gateway's pages and its return stay on
		// the host (and /o/{slug}) the member pays from, where their session is.
		gw = payment.NewTestGateway(server.TestGatewayURLs(""))
	}
	switch cfg.PaymentProvider {
	case stripepay.Name:
		p, err := stripepay.New(stripepay.Config{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret,
			APIURL: cfg.StripeAPIURL.String()})
		return p, gw, err
	case banktransfer.Name:
		p, err := bankTransfer(cfg.BankCreditor)
		return p, gw, err
	}
	return gw, gw, nil
}

// PaymentSecretPurpose is the purpose the organisations' Stripe keys are
// sealed for with the session key.
const PaymentSecretPurpose = "organisation payment secret"

// orgPaymentOptions wires the organisations' own payment settings into
// the service *svc will be: their secrets sealed with the session key, and
// the directory of their providers (engine/payproviders), which reads the
// settings through the service and builds each provider as the
// environment's would be built, with the organisation's keys or account.
func orgPaymentOptions(cfg config.Config, gw *payment.TestGateway, log *slog.Logger, svc **engine.Service) []engine.ServiceOption {
	dir := payproviders.New(func(ctx context.Context) ([]settings.OrganisationPaymentConfig, error) {
		return settings.Of((*svc)).OrganisationPaymentConfigs(ctx)
	}, payproviders.Build(payproviders.Options{StripeAPIURL: cfg.StripeAPIURL.String(), TestGateway: testGatewayOrNil(gw), PayLink: relativePayLink}), log, 0)
	opts := []engine.ServiceOption{payment.WithPaymentProviders(dir.Provider), payment.WithRetiredPaymentProviders(dir.Retired),
		payment.WithPaymentMethodProviders(dir.Method), payment.WithPaymentSettingsChanged(dir.Invalidate),
		payment.WithTestPayments(gw != nil)}
	if cfg.SessionKey != nil {
		opts = append(opts, engine.WithSecretSealer(cfg.SessionKey.Sealer(PaymentSecretPurpose)))
	}
	return opts
}

// bankTransfer is the bank-transfer provider of an account (the
// PORTAL_BANK_ one, or an organisation's), whose page is the portal's stable pay link.
func bankTransfer(creditor banking.Creditor) (*banktransfer.Provider, error) {
	if creditor.IBAN == "" {
		return nil, errors.New("invalid configuration: bank transfers need the account members transfer to: PORTAL_BANK_CREDITOR_NAME and PORTAL_BANK_IBAN")
	}
	return banktransfer.New(creditor, relativePayLink)
}

// relativePayLink is a bank transfer's page: a relative pay link, so that
// the member stays on the host (and /o/{slug}) of the link they followed,
// as with the test gateway.
func relativePayLink(ref string, amountMinor int64) string {
	return server.PaymentLinks("").PayLink("", ref, amountMinor)
}

// loadConfigAround is config.Load for a sub-command whose positional
// argument may come first (as in the usage) or last: the flag package
// stops at the first non-flag. It returns the positional arguments.
func loadConfigAround(fs *flag.FlagSet, args []string, getenv func(string) string) (config.Config, []string, error) {
	var pos []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		pos, args = args[:1], args[1:]
	}
	cfg, more, err := config.Load(fs, args, getenv)
	return cfg, append(pos, more...), err
}

// paymentService opens the database of cfg (beside a server) and returns
// the engine with the payment providers a server has, for the commands
// that settle payments (payments, debits); closeDB closes the database.
func paymentService(ctx context.Context, cfg config.Config, stderr io.Writer) (svc *engine.Service, closeDB func(), err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	provider, gw, err := paymentProvider(cfg)
	if err != nil {
		return nil, nil, err
	}
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := migrations.CheckCurrent(ctx, db); err != nil {
		closeDB()
		return nil, nil, err
	}
	log := cfg.Logger(stderr)
	// The public address too: links a command queues (a returned debit's
	// pay link in the member's e-mail) name the club's own host, as the
	// server's do.
	svc = engine.NewService(db, provider, append([]engine.ServiceOption{engine.WithLogger(log), engine.WithPaymentLinks(server.PaymentLinks(cfg.BaseURL)),
		engine.WithPublicURL(cfg.BaseURL)},
		orgPaymentOptions(cfg, gw, log, &svc)...)...)
	return svc, closeDB, nil
}

// testGatewayOrNil keeps a nil gateway a nil provider (not an interface
// holding a nil pointer).
func testGatewayOrNil(gw *payment.TestGateway) engine.PaymentProvider {
	if gw == nil {
		return nil
	}
	return gw
}

const paymentsUsage = `usage:
  portal payments capture REFERENCE --amount 184.50 [--currency EUR] [--date 2026-11-20] [--note TEXT] [--id ID]
  portal payments import FILE [--org ID] [--dry-run]
  portal payments refunded REFERENCE [--note TEXT]
  portal payments attention [--org ID]
  portal payments credits [--org ID] [--state unmatched|assigned|returned|ignored|all]
  portal payments credits --resolve ID --as assigned|returned|ignored [--payment REFERENCE] [--note TEXT] [--org ID]
  portal payments settings --org ID [--provider stripe|bank_transfer|test|""] [--stripe-key-file FILE]
      [--stripe-webhook-secret-file FILE] [--creditor-name NAME] [--iban IBAN] [--bic BIC]
      [--creditor-address "street;number;postcode;town;country"] [--methods stripe,bank_transfer,direct_debit]
      [--creditor-id ID] [--prenotification-days N] [--debit-file-version V] [--collection-day N] [--return-fee 3.50]`

// paymentsCommands are the sub-commands of portal payments, with whether
// each takes one positional argument.
var paymentsCommands = map[string]bool{"capture": true, "import": true, "refunded": true, "attention": false, "settings": false, "credits": false}

// cmdPayments is staff's side of payments: capturing money seen on the
// account, importing a bank statement (camt.053/054), recording refunds
// made by hand, listing what needs attention, and an organisation's own
// payment settings.
func cmdPayments(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(paymentsUsage)
	}
	positional, known := paymentsCommands[args[0]]
	if !known {
		return errors.New(paymentsUsage)
	}
	fs := newFlagSet("payments "+args[0], stderr)
	amount := fs.String("amount", "", "capture: the amount that arrived, such as 184.50")
	currency := fs.String("currency", "", "capture: its currency (default: the payment's)")
	date := fs.String("date", "", "capture: the booking date, YYYY-MM-DD (default: today)")
	note := fs.String("note", "", "capture, refunded, credits --resolve: a note for the record")
	id := fs.String("id", "", "capture: the bank's id of the credit, so that it is captured once (default: reference, date and amount)")
	dryRun := fs.Bool("dry-run", false, "import: report what would be captured, capture nothing")
	org := fs.Int64("org", 0, "import: the organisation whose bank account the statement is of (default: PORTAL_BANK_IBAN); attention, settings: the organisation; credits: the organisation's credits (default: all, and with --resolve the shared account's)")
	var sf settingsFlags
	if args[0] == "settings" {
		sf.register(fs)
	}
	var cf creditFlags
	if args[0] == "credits" {
		cf.register(fs)
	}
	cfg, pos, err := loadConfigAround(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if positional != (len(pos) == 1) || len(pos) > 1 {
		return errors.New(paymentsUsage)
	}
	svc, closeDB, err := paymentService(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	switch args[0] {
	case "settings":
		return paymentSettings(ctx, svc, *org, fs, sf, stdout)
	case "attention":
		return paymentsAttention(ctx, svc, *org, stdout)
	case "credits":
		if cf.resolve != 0 {
			return resolveCredit(ctx, svc, *org, cf, *note, stdout)
		}
		return listCredits(ctx, svc, *org, cf.state, stdout)
	case "refunded":
		p, err := payment.Of(svc).StaffMarkRefundPaidBack(ctx, engine.CommandLine, pos[0], *note)
		if err != nil {
			return describeEngineError(err)
		}
		fmt.Fprintf(stdout, "%s: refund of %s recorded as paid back\n", p.Reference, engine.FormatMoney(p.AmountMinor, p.Currency))
		return nil
	case "import":
		account := cfg.BankCreditor.IBAN
		if *org != 0 {
			ps, err := settings.Of(svc).PaymentSettings(ctx, *org)
			if err != nil {
				return describeEngineError(err)
			}
			if account = banking.IBAN(ps.BankIBAN); account == "" {
				return fmt.Errorf("payments import: organisation %d has no bank account of its own (payments settings --iban)", *org)
			}
		}
		if account == "" {
			return errors.New("payments import: the statement's account is needed: PORTAL_BANK_IBAN, or --org for an organisation's own account")
		}
		return importStatement(ctx, svc, engine.StatementOptions{Account: account, Organisation: *org, DryRun: *dryRun, Actor: &engine.CommandLine}, pos[0], stdout)
	}
	if *amount == "" {
		return errors.New("payments capture: --amount is required\n" + paymentsUsage)
	}
	minor, err := engine.ParseAmount(*amount)
	if err != nil {
		return fmt.Errorf("payments capture: --amount: %w", err)
	}
	var booked time.Time
	if *date != "" {
		if booked, err = time.Parse(time.DateOnly, *date); err != nil {
			return fmt.Errorf("payments capture: --date %q: want YYYY-MM-DD", *date)
		}
	}
	res, err := payment.Of(svc).CapturePayment(ctx, payment.Capture{Reference: pos[0], AmountMinor: minor, Currency: *currency, BookedOn: booked, Note: *note, ID: *id,
		Actor: &engine.CommandLine})
	if err != nil {
		return err
	}
	paid := engine.FormatMoney(minor, strings.ToUpper(*currency))
	if *currency == "" {
		paid = engine.FormatMoney(minor, res.Currency)
	}
	expected := engine.FormatMoney(res.ExpectedMinor, res.Currency)
	switch {
	case res.Replayed:
		fmt.Fprintf(stdout, "%s: nothing changed (this capture was recorded before, or the payment was already settled)\n", res.RF)
	case res.SecondCredit:
		fmt.Fprintf(stdout, "%s: the order was already paid: %s recorded as a second payment %s, owed back to the member. Transfer it back, then run: portal payments refunded %s\n",
			res.RF, paid, res.CreditReference, res.CreditReference)
	case res.Problem == "partial":
		fmt.Fprintf(stdout, "%s: partial payment recorded: %s of %s so far; the registration completes when the rest arrives.\n", res.RF,
			engine.FormatMoney(res.CapturedMinor, res.Currency), expected)
	case res.Problem != "":
		fmt.Fprintf(stdout, "%s: %s payment recorded, registration NOT completed: %s paid, %s expected. Settle the difference with the member.\n", res.RF, res.Problem, paid, expected)
	case res.Stale:
		fmt.Fprintf(stdout, "%s: captured %s, but the order was already paid or cancelled: transfer the money back to the member.\n", res.RF, paid)
	default:
		fmt.Fprintf(stdout, "%s: captured %s; registration completed (order %d, user %s)\n", res.RF, paid, res.Order.ID, res.UserKey)
	}
	return nil
}

// importStatement imports one statement file and prints every credit to
// the account with what became of it.
func importStatement(ctx context.Context, svc *engine.Service, opt engine.StatementOptions, file string, stdout io.Writer) error {
	account, dryRun := opt.Account, opt.DryRun
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := banking.ParseStatement(f)
	if err != nil {
		return fmt.Errorf("payments import: %w", err)
	}
	rep, err := bankstatement.Of(svc).ImportStatement(ctx, st, opt)
	if err != nil {
		return err
	}
	mode := ""
	if dryRun {
		mode = " (dry run: nothing captured)"
	}
	fmt.Fprintf(stdout, "%s %s%s: %d credits to %s, %d imported before; %d returned direct debits, %d applied before; %d to other accounts, %d other entries\n",
		rep.Message, rep.MessageID, mode, len(rep.Lines)+rep.AlreadyImported, account, rep.AlreadyImported,
		len(rep.Returns)+rep.ReturnsBefore, rep.ReturnsBefore, rep.OtherAccounts, rep.NotCredits)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREDIT\tBOOKED\tAMOUNT\tMATCH\tRESULT\tREASON")
	failed := 0
	for _, l := range rep.Lines {
		result := "listed"
		switch {
		case l.Err != nil:
			result, failed = "error: "+l.Err.Error(), failed+1
		case dryRun && l.RF != "" && l.Outcome != banking.OutcomeDuplicate:
			result = "would capture"
		case l.Kept:
			result = "kept unmatched (portal payments credits)"
		case l.SecondCredit:
			result = "second payment, owed back (portal payments attention)"
		case l.Completed:
			result = "captured, completed"
		case l.Captured:
			result = "recorded, not completed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Credit.ID, l.Credit.BookingDate.Format(time.DateOnly),
			engine.FormatMoney(l.Credit.AmountMinor, l.Credit.Currency), l.Outcome, result, l.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Returned direct debits (debit_returns.go), one line each.
	for _, l := range rep.Returns {
		r := l.Return
		amount := engine.FormatMoney(r.AmountMinor, r.Currency)
		switch {
		case l.Err != nil:
			failed++
			fmt.Fprintf(stdout, "direct debit return %s (%s): error: %v\n", r.EndToEndID, amount, l.Err)
		case l.Outcome != directdebit.ReturnApplied:
			fmt.Fprintf(stdout, "%s (%s): nothing changed\n", l.Reason, amount)
		default:
			what := l.Reason
			if dryRun {
				what = "would be taken back: " + banking.ReturnReasonText(r.ReasonCode, "en")
			}
			if l.FeeMinor > 0 {
				what += "; return fee " + engine.FormatMoney(l.FeeMinor, r.Currency) + " added to the order"
			}
			if l.MandateEnded {
				what += "; mandate ended"
			}
			fmt.Fprintf(stdout, "direct debit %s (%s, %s): %s (order %d)\n", r.EndToEndID, amount, r.ReasonCode, what, l.OrderID)
		}
	}
	if failed > 0 {
		return fmt.Errorf("payments import: %d credits or returns could not be applied (see above); run the import again", failed)
	}
	return nil
}
