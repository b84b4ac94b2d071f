package messages_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/chromedp/chromedp"

	"portal/engine/banking"
	"portal/views"
	"portal/views/mailview"
)

// TestMailScreenshots writes docs/OPERATIONS.md's pictures of the messages' HTML
// parts (docs/mail/*.png) with Chromium, from the views the message
// handlers render. Only with PORTAL_DOCS_SCREENSHOTS=1: a documentation
// step, not a check.
func TestMailScreenshots(t *testing.T) {
	if os.Getenv("PORTAL_DOCS_SCREENSHOTS") != "1" {
		t.Skip("PORTAL_DOCS_SCREENSHOTS=1 writes docs/mail/*.png")
	}
	member := mailview.MemberModel{Club: "Riverside Rowing Club", Name: "Robin", Type: "Junior", Period: "Season 2026/2027",
		Ends: "31 October 2027", Contact: "office@riverside.example"}
	welcome, expiry := member, member
	welcome.Subject = "Welcome to Riverside Rowing Club"
	expiry.Subject, expiry.Name, expiry.Type = "Riverside Rowing Club: your membership ends on 31 October 2027", "Alex", "Adult"
	rf, err := banking.CreditorReference("PO-T7X7XVIBDYFTFYAB")
	if err != nil {
		t.Fatal(err)
	}
	code, err := banking.Transfer{Creditor: banking.Creditor{Name: "Riverside Rowing Club", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX"},
		AmountMinor: 18450, Currency: "EUR", Reference: rf}.QRCode()
	if err != nil {
		t.Fatal(err)
	}
	png, err := code.PNG(4)
	if err != nil {
		t.Fatal(err)
	}
	transfer := views.BankTransferModel{Creditor: "Riverside Rowing Club", IBAN: "DE89 3704 0044 0532 0130 00", IBANCompact: "DE89370400440532013000",
		BIC: "COBADEFFXXX", Amount: "184.50", Currency: "EUR", Reference: rf.String(), ReferenceCompact: string(rf),
		// The message refers to its inline part (cid:); a file in a browser needs the image itself.
		QRImageURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), QRName: "QR code of this bank transfer"}
	mails := map[string]templ.Component{
		"transfer-request.png": mailview.TransferRequest(mailview.TransferRequestModel{Club: "Riverside Rowing Club",
			Subject: "Riverside Rowing Club: your registration is saved, please transfer EUR 184.50", Period: "Season 2026/2027",
			Persons: []string{"Alex Morgan", "Robin Morgan"}, Total: "EUR 184.50",
			Link: "https://riverside.example/pay/PO-T7X7XVIBDYFTFYAB?amount=184.50&reference=PO-T7X7XVIBDYFTFYAB", Transfer: transfer}),
		"mandate.png": mailview.Mandate(mailview.MandateModel{Club: "Riverside Rowing Club", Subject: "Riverside Rowing Club: your direct debit mandate, EUR 184.50 collected on 15 March 2027",
			Event: "given", Persons: []string{"Alex Morgan", "Robin Morgan"}, Period: "Season 2026/2027", Total: "EUR 184.50", Due: "15 March 2027",
			Creditor: "Riverside Rowing Club", CreditorID: "DE98ZZZ09999999999", Reference: "RIVERSIDE-000042", Account: "DE89 … 3000",
			Link: "https://riverside.example/pay/PO-T7X7XVIBDYFTFYAB"}),
		"welcome.png": mailview.Welcome(welcome),
		"expiry.png":  mailview.Expiry(expiry),
		"payment-link.png": mailview.PaymentLink(mailview.PaymentLinkModel{Club: "Riverside Rowing Club", Subject: "Riverside Rowing Club: your payment link",
			Period: "Season 2026/2027", Persons: []string{"Alex Morgan", "Robin Morgan"}, Total: "EUR 184.50", Link: "https://riverside.example/pay/PR-T7X7XVIBDYFTFYAB"}),
		"renewal.png": mailview.Renewal(mailview.RenewalModel{Club: "Riverside Rowing Club", Subject: "Riverside Rowing Club: renew your membership for Season 2027/2028",
			Persons: []string{"Alex", "Robin"}, Ending: "Season 2026/2027", Ends: "31 October 2027", Next: "Season 2027/2028",
			Link: "https://riverside.example/membership/register/3?u=demo&h=0", Contact: "office@riverside.example"}),
	}
	exe := "/usr/bin/chromium"
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.WindowSize(700, 300))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	dir := t.TempDir()
	out, _ := filepath.Abs(filepath.Join("..", "..", "docs", "mail"))
	for name, c := range mails {
		var html bytes.Buffer
		if err := c.Render(context.Background(), &html); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, name+".html")
		if err := os.WriteFile(file, html.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(700, 300)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Navigate("file://"+file)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
