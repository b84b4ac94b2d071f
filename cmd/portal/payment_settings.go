package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"portal/engine/payment/settings"

	"portal/engine"
	"portal/engine/payment"
	"portal/engine/staff"
)

// settingsFlags are the flags of portal payments settings: an
// organisation's own payment settings. The Stripe keys come from files, so
// that they are not in the shell's history or the process list.
type settingsFlags struct {
	provider, keyFile, webhookSecretFile, creditorName, iban, bic, address string
	methods, creditorID, debitFileVersion, returnFee                       string
	prenotificationDays, collectionDay                                     int
}

func (f *settingsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.provider, "provider", "", `the organisation's payment provider: stripe, bank_transfer, test (development only) or "" for the portal's default`)
	fs.StringVar(&f.keyFile, "stripe-key-file", "", "file holding the organisation's Stripe secret key (sk_... or rk_...); an empty file clears it")
	fs.StringVar(&f.webhookSecretFile, "stripe-webhook-secret-file", "", "file holding the signing secret (whsec_...) of the organisation's webhook endpoint {PORTAL_BASE_URL}/webhooks/stripe/{slug}")
	fs.StringVar(&f.creditorName, "creditor-name", "", "account holder of the organisation's bank account (at most 70 characters)")
	fs.StringVar(&f.iban, "iban", "", "IBAN of that account, spaces allowed")
	fs.StringVar(&f.bic, "bic", "", "BIC of that account (optional)")
	fs.StringVar(&f.address, "creditor-address", "", "account holder's address as street;number;postcode;town;country (required for CH and LI accounts)")
	fs.StringVar(&f.methods, "methods", "", `the payment methods members choose from, comma-separated, the default first: stripe, bank_transfer, direct_debit; "" offers the provider alone`)
	fs.StringVar(&f.creditorID, "creditor-id", "", "the organisation's SEPA Creditor Identifier (direct debit), for example DE98ZZZ09999999999")
	fs.IntVar(&f.prenotificationDays, "prenotification-days", payment.DefaultPrenotificationDays, "calendar days a direct debit is announced before its collection (1 to 14; a shorter period is stated in the mandate)")
	fs.StringVar(&f.debitFileVersion, "debit-file-version", payment.DebitFileV08, "pain.008 version of the collection files: pain.008.001.08 or pain.008.001.02")
	fs.IntVar(&f.collectionDay, "collection-day", 0, "day of the month direct debits are collected (1 to 28); 0: the first business day the pre-notification period allows")
	fs.StringVar(&f.returnFee, "return-fee", "0.00", "the bank's fee for a returned direct debit, added to the order it returned, such as 3.50")
}

// change builds the change from the settings flags given on the command
// line, and says whether there is one.
func (f *settingsFlags) change(fs *flag.FlagSet) (settings.PaymentSettingsChange, bool, error) {
	var c settings.PaymentSettingsChange
	var errs []error
	readSecret := func(flagName, file string) *string {
		b, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flagName, err))
		}
		v := strings.TrimSpace(string(b))
		return &v
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "provider":
			c.Provider = &f.provider
		case "stripe-key-file":
			c.StripeSecretKey = readSecret(fl.Name, f.keyFile)
		case "stripe-webhook-secret-file":
			c.StripeWebhookSecret = readSecret(fl.Name, f.webhookSecretFile)
		case "creditor-name":
			c.BankCreditorName = &f.creditorName
		case "iban":
			c.BankIBAN = &f.iban
		case "bic":
			c.BankBIC = &f.bic
		case "creditor-address":
			c.BankCreditorAddress = &f.address
		case "methods":
			list := []string{}
			for _, m := range strings.Split(f.methods, ",") {
				if m = strings.TrimSpace(m); m != "" {
					list = append(list, m)
				}
			}
			c.Methods = &list
		case "creditor-id":
			c.DebitCreditorID = &f.creditorID
		case "prenotification-days":
			c.DebitPrenotificationDays = &f.prenotificationDays
		case "debit-file-version":
			c.DebitFileVersion = &f.debitFileVersion
		case "collection-day":
			c.DebitCollectionDay = &f.collectionDay
		case "return-fee":
			minor, err := engine.ParseAmount(f.returnFee)
			if err != nil {
				errs = append(errs, fmt.Errorf("--return-fee: %w", err))
			}
			c.DebitReturnFeeMinor = &minor
		}
	})
	// Other flags (the database's) change nothing.
	return c, c != (settings.PaymentSettingsChange{}), errors.Join(errs...)
}

// paymentSettings shows an organisation's own payment settings, after
// applying the settings flags given.
func paymentSettings(ctx context.Context, svc *engine.Service, orgID int64, fs *flag.FlagSet, f settingsFlags, stdout io.Writer) error {
	if orgID <= 0 {
		return errors.New("payments settings: --org ID is required\n" + paymentsUsage)
	}
	c, changed, err := f.change(fs)
	if err != nil {
		return err
	}
	var view *settings.PaymentSettingsView
	if changed {
		view, err = settings.Of(svc).StaffSetPaymentSettings(ctx, engine.CommandLine, orgID, c)
	} else {
		view, err = settings.Of(svc).PaymentSettings(ctx, orgID)
	}
	if err != nil {
		return describeEngineError(err)
	}
	provider := view.Provider
	if provider == "" {
		provider = `"" (the portal's default: PORTAL_PAYMENT_PROVIDER)`
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "provider\t%s\n", provider)
	fmt.Fprintf(w, "stripe secret key\t%s\n", setOrNot(view.StripeSecretKeySet))
	fmt.Fprintf(w, "stripe webhook secret\t%s\n", setOrNot(view.StripeWebhookSecretSet))
	fmt.Fprintf(w, "creditor name\t%s\n", dashIfEmpty(view.BankCreditorName))
	fmt.Fprintf(w, "IBAN\t%s\n", dashIfEmpty(view.BankIBAN))
	fmt.Fprintf(w, "BIC\t%s\n", dashIfEmpty(view.BankBIC))
	fmt.Fprintf(w, "creditor address\t%s\n", dashIfEmpty(view.BankCreditorAddress))
	fmt.Fprintf(w, "methods\t%s\n", dashIfEmpty(strings.Join(view.Methods, ", ")))
	fmt.Fprintf(w, "creditor identifier\t%s\n", dashIfEmpty(view.DebitCreditorID))
	fmt.Fprintf(w, "pre-notification days\t%d\n", view.DebitPrenotificationDays)
	fmt.Fprintf(w, "debit file version\t%s\n", view.DebitFileVersion)
	fmt.Fprintf(w, "collection day\t%s\n", collectionDayText(view.DebitCollectionDay))
	fmt.Fprintf(w, "return fee\t%s\n", engine.FormatAmount(view.DebitReturnFeeMinor))
	fmt.Fprintf(w, "updated\t%s\n", timeOrDash(view.UpdatedAt))
	return w.Flush()
}

// paymentsAttention lists the payments staff are to act on.
func paymentsAttention(ctx context.Context, svc *engine.Service, orgID int64, stdout io.Writer) error {
	if orgID > 0 {
		ctx = engine.WithOrganisation(ctx, orgID)
	}
	list, err := staff.Of(svc).PaymentsNeedingAttention(ctx, staff.AttentionQuery{Limit: 500})
	if err != nil {
		return describeEngineError(err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ORG\tORDER\tPAYMENT\tAMOUNT\tSINCE\tTO DO")
	for _, a := range list {
		todo := "check: " + a.Payment.Problem
		switch {
		case a.RefundByHand:
			todo = "transfer the money back, then: portal payments refunded " + a.Payment.Reference
		case a.Reason == staff.AttentionSecondPayment:
			todo = "second payment: the portal refunds it through the provider"
		case a.Reason == staff.AttentionPendingTooLong:
			todo = "pending for more than 14 days: remind the member or cancel"
		case a.Reason == staff.AttentionDebitReturned:
			todo = staff.ReturnedDebitText(a.ReturnCode) + ": ask the member to pay by the link in the e-mail they were sent, or to give another account"
		case a.Reason == staff.AttentionDebitLeftOut:
			todo = "direct debit left out of the collection file: " + a.Order.DebitProblem
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", a.Order.OrganisationID, a.Order.PayReference, a.Payment.Reference,
			engine.FormatMoney(a.Payment.AmountMinor, a.Payment.Currency), a.Payment.UpdatedAt.Format(time.DateOnly), todo)
	}
	return w.Flush()
}

func setOrNot(set bool) string {
	if set {
		return "set (write-only)"
	}
	return "-"
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// collectionDayText says when a club collects its direct debits.
func collectionDayText(day int) string {
	if day == 0 {
		return "the first business day after the pre-notification period"
	}
	return fmt.Sprintf("day %d of the month (or the next business day)", day)
}
