package messages_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a-h/templ"
	"github.com/chromedp/chromedp"

	"portal/views"
)

// TestMailScreenshots writes the README's pictures of the messages' HTML
// parts (docs/mail/*.png) with Chromium, from the views the message
// handlers render. Only with PORTAL_DOCS_SCREENSHOTS=1: a documentation
// step, not a check.
func TestMailScreenshots(t *testing.T) {
	if os.Getenv("PORTAL_DOCS_SCREENSHOTS") != "1" {
		t.Skip("PORTAL_DOCS_SCREENSHOTS=1 writes docs/mail/*.png")
	}
	member := views.MemberMailModel{Club: "Riverside Rowing Club", Name: "Robin", Type: "Junior", Period: "Season 2026/2027",
		Ends: "31 October 2027", Contact: "office@riverside.example"}
	welcome, expiry := member, member
	welcome.Subject = "Welcome to Riverside Rowing Club"
	expiry.Subject, expiry.Name, expiry.Type = "Riverside Rowing Club: your membership ends on 31 October 2027", "Alex", "Adult"
	mails := map[string]templ.Component{
		"welcome.png": views.WelcomeMail(welcome),
		"expiry.png":  views.ExpiryMail(expiry),
		"payment-link.png": views.PaymentLinkMail(views.PaymentLinkMailModel{Club: "Riverside Rowing Club", Subject: "Riverside Rowing Club: your payment link",
			Period: "Season 2026/2027", Persons: []string{"Alex Morgan", "Robin Morgan"}, Total: "EUR 184.50", Link: "https://riverside.example/pay/PR-T7X7XVIBDYFTFYAB"}),
		"renewal.png": views.RenewalMail(views.RenewalMailModel{Club: "Riverside Rowing Club", Subject: "Riverside Rowing Club: renew your membership for Season 2027/2028",
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
