package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"portal/engine"
	"portal/engine/bankstatement"
)

// creditFlags are the flags of portal payments credits.
type creditFlags struct {
	state   string
	resolve int64
	as      string
	payment string
}

func (cf *creditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&cf.state, "state", string(bankstatement.CreditUnmatched), "credits: the state to list (unmatched, assigned, returned, ignored or all)")
	fs.Int64Var(&cf.resolve, "resolve", 0, "credits: the id (first column) of the credit to resolve")
	fs.StringVar(&cf.as, "as", "", "credits --resolve: assigned, returned or ignored")
	fs.StringVar(&cf.payment, "payment", "", "credits --resolve --as assigned: the payment reference (RF…, PO-…, PR-…) or registration number it pays")
}

// listCredits prints the bank credits statement imports kept because they
// matched no open payment: of one organisation with --org, else of every
// organisation and the shared account (ORG "-").
func listCredits(ctx context.Context, svc *engine.Service, orgID int64, state string, stdout io.Writer) error {
	q := bankstatement.CreditQuery{OrganisationID: orgID, Everyone: orgID == 0, Limit: 1000}
	switch st := bankstatement.CreditState(state); {
	case state == "all":
	case st == bankstatement.CreditUnmatched || st == bankstatement.CreditAssigned || st == bankstatement.CreditReturned || st == bankstatement.CreditIgnored:
		q.States = []bankstatement.CreditState{st}
	default:
		return fmt.Errorf("payments credits: --state %q: want unmatched, assigned, returned, ignored or all", state)
	}
	list, err := bankstatement.Of(svc).BankCredits(ctx, q)
	if err != nil {
		return describeEngineError(err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tORG\tCREDIT\tBOOKED\tAMOUNT\tFROM\tREMITTANCE\tSTATE\tWHY")
	for _, c := range list {
		org, booked := "-", "-"
		if c.OrganisationID != nil {
			org = fmt.Sprint(*c.OrganisationID)
		}
		if c.BookedOn != nil {
			booked = c.BookedOn.UTC().Format(time.DateOnly)
		}
		why := c.Reason
		if c.State != bankstatement.CreditUnmatched {
			why = "by " + c.ResolvedBy
			if c.PaymentReference != nil {
				why += ", paid " + *c.PaymentReference
			}
			if c.Note != "" {
				why += ": " + c.Note
			}
		}
		from := strings.TrimSpace(c.DebtorName + " " + c.DebtorIBAN)
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, org, c.CreditID, booked, engine.FormatMoney(c.AmountMinor, c.Currency),
			dashIfEmpty(from), dashIfEmpty(strings.TrimSpace(c.Reference+" "+c.Remittance)), c.State, why)
	}
	return w.Flush()
}

// resolveCredit settles one kept credit from the command line, as a
// treasurer does on the staff payments page (the shared account's credits
// are resolved only here).
func resolveCredit(ctx context.Context, svc *engine.Service, orgID int64, cf creditFlags, note string, stdout io.Writer) error {
	if cf.as == "" {
		return errors.New("payments credits --resolve: --as assigned, returned or ignored is required")
	}
	res, err := bankstatement.Of(svc).ResolveCredit(ctx, engine.CommandLine, orgID, cf.resolve, bankstatement.CreditResolution{State: bankstatement.CreditState(cf.as),
		Payment: cf.payment, Note: note})
	if err != nil {
		return describeEngineError(err)
	}
	c := res.Credit
	amount := engine.FormatMoney(c.AmountMinor, c.Currency)
	switch {
	case res.Replayed:
		fmt.Fprintf(stdout, "credit %s (%s): %s before; nothing changed\n", c.CreditID, amount, c.State)
	case res.Capture != nil && res.Capture.Problem != "":
		fmt.Fprintf(stdout, "credit %s (%s): captured for %s; the registration is NOT completed (%s)\n", c.CreditID, amount,
			res.Capture.RF, res.Capture.Problem)
	case res.Capture != nil && res.Capture.Stale:
		fmt.Fprintf(stdout, "credit %s (%s): captured for %s, but the order was already paid or cancelled: transfer the money back\n", c.CreditID, amount, res.Capture.RF)
	case res.Capture != nil:
		fmt.Fprintf(stdout, "credit %s (%s): captured for %s; registration completed\n", c.CreditID, amount, res.Capture.RF)
	default:
		fmt.Fprintf(stdout, "credit %s (%s): %s (%s)\n", c.CreditID, amount, c.State, c.Note)
	}
	return nil
}
