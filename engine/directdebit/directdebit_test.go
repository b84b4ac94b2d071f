package directdebit_test

import (
	"context"
	"errors"
	"testing"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/directdebit"
	"portal/engine/payment"
)

func payLink(ref string, _ int64) string { return "/pay/" + ref }

// TestProvider: built only from a valid account and Creditor Identifier;
// its checkout is the pay link, in EUR only; nothing to retrieve or
// expire; a refund is owed by hand.
func TestProvider(t *testing.T) {
	iban, err := banking.ParseIBAN("DE89370400440532013000")
	if err != nil {
		t.Fatal(err)
	}
	creditor := banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: iban}
	if _, err := directdebit.New(creditor, "DE97ZZZ09999999999", payLink); err == nil {
		t.Fatal("an invalid creditor identifier was accepted")
	}
	if _, err := directdebit.New(banking.Creditor{Name: "x"}, "DE98ZZZ09999999999", payLink); err == nil {
		t.Fatal("a creditor without an account was accepted")
	}
	p, err := directdebit.New(creditor, "DE98ZZZ09999999999", payLink)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	co, err := p.CreateCheckout(ctx, engine.CheckoutRequest{OrderReference: "PO-1", AmountMinor: 100, Currency: "EUR"})
	if err != nil || co.URL != "/pay/PO-1" || p.Name() != payment.DirectDebitProvider || p.CreditorID() != "DE98ZZZ09999999999" {
		t.Fatalf("checkout %+v %v", co, err)
	}
	if _, err := p.CreateCheckout(ctx, engine.CheckoutRequest{OrderReference: "PO-1", AmountMinor: 100, Currency: "CHF"}); err == nil {
		t.Fatal("a debit in CHF")
	}
	if c, err := p.Retrieve(ctx, engine.Payment{Reference: "PR-1"}); err != nil || c.Outcome != engine.OutcomeOpen {
		t.Fatalf("retrieve %+v %v", c, err)
	}
	if _, err := p.Refund(ctx, engine.RefundRequest{}); !errors.Is(err, payment.ErrManualRefund) {
		t.Fatalf("refund: %v", err)
	}
}
