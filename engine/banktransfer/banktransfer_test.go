package banktransfer_test

import (
	"errors"
	"strings"
	"testing"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
)

func payLink(ref string, amount int64) string {
	return "https://portal.test/pay/" + ref + "?amount=" + engine.FormatAmount(amount)
}

func provider(t *testing.T, iban string, address *banking.Address) *banktransfer.Provider {
	t.Helper()
	i, err := banking.ParseIBAN(iban)
	if err != nil {
		t.Fatal(err)
	}
	p, err := banktransfer.New(banking.Creditor{Name: "TV Demo", IBAN: i, Address: address}, payLink)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewRefusesBadAccounts(t *testing.T) {
	if _, err := banktransfer.New(banking.Creditor{Name: "TV Demo", IBAN: "DE88370400440532013000"}, payLink); err == nil {
		t.Error("a wrong IBAN check digit was accepted")
	}
	if _, err := banktransfer.New(banking.Creditor{Name: "FC Demo", IBAN: "CH9300762011623852957"}, payLink); err == nil || !strings.Contains(err.Error(), "address") {
		t.Errorf("a Swiss account without address: %v", err)
	}
	if _, err := banktransfer.New(banking.Creditor{Name: "TV Demo", IBAN: "DE89370400440532013000"}, nil); err == nil {
		t.Error("no pay link was accepted")
	}
}

// TestCheckout: the checkout is the portal's pay link, never expires, and
// carries the order's RF reference as the provider id; a currency without
// a QR standard for the account fails at once.
func TestCheckout(t *testing.T) {
	p := provider(t, "DE89370400440532013000", nil)
	req := engine.CheckoutRequest{Reference: "PR-ATTEMPT1", OrderReference: "PO-ABCDEFGH23456789", AmountMinor: 18450, Currency: "EUR"}
	co, err := p.CreateCheckout(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := banking.CreditorReference("PO-ABCDEFGH23456789")
	if co.ProviderID != string(want) || co.URL != payLink("PO-ABCDEFGH23456789", 18450) || !co.ExpiresAt.IsZero() {
		t.Fatalf("checkout %+v, want provider id %s", co, want)
	}
	// Another attempt of the same order gets the same reference.
	req.Reference = "PR-ATTEMPT2"
	if co2, _ := p.CreateCheckout(t.Context(), req); co2.ProviderID != co.ProviderID {
		t.Errorf("second attempt: %s, want %s", co2.ProviderID, co.ProviderID)
	}
	req.Currency = "CHF"
	if _, err := p.CreateCheckout(t.Context(), req); err == nil || !strings.Contains(err.Error(), "no QR standard") {
		t.Errorf("CHF to a German account: %v", err)
	}

	pay := engine.Payment{Reference: "PR-ATTEMPT1", Provider: banktransfer.Name, ProviderID: &co.ProviderID, AmountMinor: 18450, Currency: "EUR"}
	tr, err := p.Transfer(pay)
	if err != nil || tr.Reference != want || tr.AmountMinor != 18450 || tr.Creditor.Name != "TV Demo" {
		t.Fatalf("transfer %+v, %v", tr, err)
	}
	if _, err := p.Transfer(engine.Payment{Reference: "PR-X", Provider: "stripe", ProviderID: &co.ProviderID}); err == nil {
		t.Error("a Stripe attempt gave a transfer")
	}
	if c, err := p.Retrieve(t.Context(), pay); err != nil || c.Outcome != engine.OutcomeOpen {
		t.Errorf("retrieve: %+v, %v; only a capture settles", c, err)
	}
	if _, err := p.Refund(t.Context(), engine.RefundRequest{Reference: "PR-ATTEMPT1"}); !errors.Is(err, banktransfer.ErrManualRefund) {
		t.Errorf("refund: %v", err)
	}
}

// TestSwissCheckout: a Swiss account takes EUR and CHF (QR-bill).
func TestSwissCheckout(t *testing.T) {
	p := provider(t, "CH9300762011623852957", &banking.Address{Street: "Bahnhofstrasse", Number: "1", PostCode: "8001", Town: "Zürich", Country: "CH"})
	for _, ccy := range []string{"CHF", "EUR"} {
		if _, err := p.CreateCheckout(t.Context(), engine.CheckoutRequest{OrderReference: "PO-SWISS", AmountMinor: 5000, Currency: ccy}); err != nil {
			t.Errorf("%s: %v", ccy, err)
		}
	}
}
