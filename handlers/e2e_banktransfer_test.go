package handlers_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/banking"
	"portal/handlers/handlertest"
)

// TestE2EBankTransfer shows the done page of a registration paid by bank
// transfer in Chromium: the fields, the copy buttons (127.0.0.1 may write
// the clipboard), no redirect to a payment page, no accessibility
// violation, and a QR code that scans from the browser's own pixels.
// PORTAL_DOCS_SCREENSHOTS=1 also writes docs/PAYMENTS.md's docs/img/bank-transfer.png.
func TestE2EBankTransfer(t *testing.T) {
	t.Parallel()
	creditor := banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: handlertest.MustIBAN(t, "DE89370400440532013000"), BIC: "COBADEFFXXX"}
	env := handlertest.BankTransferEnv(t, creditor)
	env.CompleteDemo(env.NewClient()) // the demo user's registration, committed through the API
	b := newE2EBrowser(t, env, "bank-transfer", true, true)
	// The member signs in with the e-mail link and finds the committed registration.
	b.do("open the mailbox", chromedp.Navigate(e2eMailbox(t, env)))
	b.click(`#mail-link`)
	b.waitVisible(`[data-testid=overview]`)

	b.navigate("/membership/register/1/done")
	b.waitVisible(`[data-testid=bank-transfer]`)
	b.settled()
	if n := b.count(`[data-testid=countdown]`); n != 0 {
		t.Errorf("the done page counts down to a payment page (%d)", n)
	}
	if n := e2eEval[int](b, `[...document.querySelectorAll("[data-testid=bank-transfer] [data-testid=copy]")].filter(b => !b.hidden).length`); n != 5 {
		t.Errorf("%d copy buttons shown, want 5 (creditor, IBAN, BIC, amount, reference)", n)
	}
	b.checkPage("done-bank-transfer")

	var order engine.Order
	if err := env.DB.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	rf, err := banking.CreditorReference(order.PayReference)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := banking.Transfer{Creditor: creditor, AmountMinor: order.TotalMinor, Currency: order.Currency, Reference: rf}.Payload()
	if err != nil {
		t.Fatal(err)
	}
	shot := e2eRun(b, "screenshot of the QR code", chromedp.Screenshot(chromedp.CSS(`[data-testid=bank-transfer-qr] svg`)))
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if got := handlertest.DecodeQR(t, img); got != want {
		t.Fatalf("the QR code in the browser decodes to\n%q\nwant\n%q", got, want)
	}

	if os.Getenv("PORTAL_DOCS_SCREENSHOTS") == "1" {
		b.do("viewport", chromedp.EmulateViewport(960, 900))
		page := e2eRun(b, "screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(e2eModuleRoot(t), "docs", "img", "bank-transfer.png"), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
