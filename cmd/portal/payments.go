package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/stripepay"
	"portal/handlers"
	"portal/migrations"
)

// paymentProvider builds the configured payment provider (validated by
// validatePayments), and the test gateway when it is the one, whose pages
// the HTTP layer serves.
func paymentProvider(cfg Config) (engine.PaymentProvider, *engine.TestGateway, error) {
	switch cfg.PaymentProvider {
	case stripepay.Name:
		p, err := stripepay.New(stripepay.Config{SecretKey: cfg.StripeSecretKey, WebhookSecret: cfg.StripeWebhookSecret,
			APIURL: cfg.StripeAPIURL.String()})
		return p, nil, err
	case banktransfer.Name:
		p, err := bankTransfer(cfg)
		return p, nil, err
	}
	// Relative addresses: the test gateway's pages and its return stay on
	// the host (and /o/{slug}) the member pays from, where their session is.
	gw := engine.NewTestGateway(handlers.TestGatewayURLs(""))
	return gw, gw, nil
}

// bankTransfer is the bank-transfer provider of the PORTAL_BANK_ account,
// whose page is the portal's stable pay link.
func bankTransfer(cfg Config) (*banktransfer.Provider, error) {
	if cfg.BankCreditor.IBAN == "" {
		return nil, errors.New("invalid configuration: bank transfers need the account members transfer to: PORTAL_BANK_CREDITOR_NAME and PORTAL_BANK_IBAN")
	}
	// A relative pay link: the member stays on the host (and /o/{slug}) of
	// the link they followed, as with the test gateway.
	links := handlers.PaymentLinks("")
	return banktransfer.New(cfg.BankCreditor, func(ref string, amountMinor int64) string { return links.PayLink("", ref, amountMinor) })
}

const paymentsUsage = `usage:
  portal payments capture REFERENCE --amount 184.50 [--currency EUR] [--date 2026-11-20] [--note TEXT] [--id ID]
  portal payments import FILE [--dry-run]`

// cmdPayments is staff's side of payment by bank transfer: capturing money
// seen on the account, and importing a bank statement (camt.053/054).
func cmdPayments(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "capture" && args[0] != "import") {
		return errors.New(paymentsUsage)
	}
	fs := newFlagSet("payments "+args[0], stderr)
	amount := fs.String("amount", "", "capture: the amount that arrived, such as 184.50")
	currency := fs.String("currency", "", "capture: its currency (default: the payment's)")
	date := fs.String("date", "", "capture: the booking date, YYYY-MM-DD (default: today)")
	note := fs.String("note", "", "capture: a note for the record")
	id := fs.String("id", "", "capture: the bank's id of the credit, so that it is captured once (default: reference, date and amount)")
	dryRun := fs.Bool("dry-run", false, "import: report what would be captured, capture nothing")
	// The positional argument may come first (as in the usage) or last:
	// the flag package stops at the first non-flag.
	rest := args[1:]
	var pos []string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		pos, rest = rest[:1], rest[1:]
	}
	cfg, more, err := loadConfig(fs, rest, getenv)
	if err != nil {
		return err
	}
	pos = append(pos, more...)
	if len(pos) != 1 {
		return errors.New(paymentsUsage)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	provider, err := bankTransfer(cfg)
	if err != nil {
		return err
	}
	db, closeDB, err := openDatabase(cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := migrations.CheckCurrent(ctx, db); err != nil {
		return err
	}
	svc := engine.NewService(db, provider, engine.WithLogger(cfg.logger(stderr)), engine.WithPaymentLinks(handlers.PaymentLinks(cfg.BaseURL)))
	if args[0] == "import" {
		return importStatement(ctx, svc, cfg, pos[0], *dryRun, stdout)
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
	res, err := svc.CapturePayment(ctx, engine.Capture{Reference: pos[0], AmountMinor: minor, Currency: *currency, BookedOn: booked, Note: *note, ID: *id})
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
func importStatement(ctx context.Context, svc *engine.Service, cfg Config, file string, dryRun bool, stdout io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := banking.ParseStatement(f)
	if err != nil {
		return fmt.Errorf("payments import: %w", err)
	}
	rep, err := svc.ImportStatement(ctx, st, engine.StatementOptions{Account: cfg.BankCreditor.IBAN, DryRun: dryRun})
	if err != nil {
		return err
	}
	mode := ""
	if dryRun {
		mode = " (dry run: nothing captured)"
	}
	fmt.Fprintf(stdout, "%s %s%s: %d credits to %s, %d imported before, %d to other accounts, %d other entries\n",
		rep.Message, rep.MessageID, mode, len(rep.Lines)+rep.AlreadyImported, cfg.BankCreditor.IBAN, rep.AlreadyImported, rep.OtherAccounts, rep.NotCredits)
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
	if failed > 0 {
		return fmt.Errorf("payments import: %d credits could not be captured (see above); run the import again", failed)
	}
	return nil
}
