package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/handlers/server"
	"portal/outbound/mail"
	"portal/outbound/mail/mailtest"
	"portal/outbound/messages"
	"portal/views/staffview"
)

// staffMail delivers the portal's messages over a real SMTP conversation
// with a server in the test process.
type staffMail struct {
	srv    *mailtest.Server
	runner *jobs.Runner
}

func newStaffMail(t *testing.T, env *handlertest.StaffEnv) *staffMail {
	t.Helper()
	srv := mailtest.Start(t, mailtest.Options{})
	u, _ := mail.ParseURL("smtp://" + srv.Addr)
	from, _ := mail.ParseFrom("Riverside Rowing Club <office@riverside.example>")
	sender, err := mail.NewSMTP(mail.Config{URL: u, From: from, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := jobs.New(env.DB, jobs.Config{})
	svc := engine.NewService(env.DB, env.Provider, engine.WithPaymentLinks(server.PaymentLinks(env.Server.URL)))
	messages.Register(r, messages.Deps{DB: env.DB, Sender: sender, BaseURL: env.Server.URL, HashSecret: handlertest.HashSecret, Payments: payment.Of(svc)})
	return &staffMail{srv: srv, runner: r}
}

// deliver runs the due message jobs and waits for n messages in all.
func (m *staffMail) deliver(t *testing.T, n int) []mailtest.Received {
	t.Helper()
	if _, err := m.runner.Work(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	return m.srv.Wait(t, n)
}

// staffBrowserSignIn signs the browser in at the test IdP as email.
func staffBrowserSignIn(env *handlertest.StaffEnv, b *e2eBrowser, email, next string) {
	b.t.Helper()
	env.IdP.Mock.QueueUser(handlertest.IdPUser("sub-"+email, email))
	b.navigate("/staff")
	b.waitVisible(`[data-testid=staff-message-link]`)
	b.checkPage("staff-sign-in")
	b.click(`[data-testid=staff-message-link]`)
	b.waitVisible(next)
	b.settled()
}

// TestE2EStaffPages: a registrar finds a household and resends its
// payment link; the treasurer's day: from the overview to the open
// payments, a part of the bank transfer, then the rest, the registration
// completes, the confirmation goes out, the audit log names both
// captures and the year-end CSV and PDF (downloaded by the browser and
// parsed) say what was paid, all in Chromium, with axe on
// every staff page. PORTAL_DOCS_SCREENSHOTS=1 also writes docs/STAFF.md's
// docs/img/staff-registration.png (the other staff screenshots come from
// TestE2EStaffLayout, make screenshots-staff).
func TestE2EStaffPages(t *testing.T) {
	t.Parallel()
	env := handlertest.BankTransferStaffEnv(t, dbtest.SQLite(t))
	env.CompleteDemo(env.NewClient())
	env.AddStaff("registrar@example.org", staff.RoleRegistrar)
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	post := newStaffMail(t, env)
	// The commit asked for the transfer by e-mail.
	if got := post.deliver(t, 1); !strings.Contains(string(got[0].Data), "cid:qr-") {
		t.Fatalf("the first mail is not the transfer request:\n%s", got[0].Data)
	}
	b := newE2EBrowser(t, env.Env, "staff", true, true)

	// The registrar finds the household and resends its link.
	staffBrowserSignIn(env, b, "registrar@example.org", `[data-testid=overview-states]`)
	b.checkPage("staff-overview")
	b.click(`[data-testid=staff-nav] a[href="/staff/registrations"]`)
	b.waitVisible(`[data-testid=registrations-filter]`)
	b.typeInto(`#q`, "robin")
	b.clickTo(`[data-testid=registrations-apply]`, `#q[value=robin]`) // the list before the search had the row too
	if n := b.count(`[data-testid=registration-row]`); n != 1 {
		t.Fatalf("%d rows found for robin", n)
	}
	if n := b.count(`[data-testid=registrations-csv]`); n != 0 {
		t.Error("a registrar is offered the export")
	}
	b.checkPage("staff-registrations")
	b.clickTo(`[data-testid=registration-link]`, `[data-testid=detail-household]`)
	if n := b.count(`[data-testid=capture-form]`); n != 0 {
		t.Error("a registrar is offered the capture")
	}
	b.clickTo(`[data-testid=action-resend-link]`, `[data-testid=staff-flash]`)
	got := post.deliver(t, 2)
	if len(got[1].To) == 0 || !strings.Contains(got[1].To[0], "morgan@example.org") || !strings.Contains(string(got[1].Data), "/pay/") {
		t.Fatalf("payment link mail to %v:\n%s", got[1].To, got[1].Data)
	}
	b.click(`[data-testid=staff-sign-out]`)
	b.waitVisible(`[data-testid=staff-message]`)

	// The treasurer's day: from the overview to who owes what, to the
	// registration; a part of the transfer arrives, then the rest.
	staffBrowserSignIn(env, b, "treasurer@example.org", `[data-testid=overview-states]`)
	b.clickTo(`[data-testid=overview-open-payments] a`, `[data-testid=open-payment-row]`)
	b.checkPage("staff-open-payments")
	b.clickTo(`[data-testid=open-payment-household]`, `[data-testid=capture-form]`)
	detail := b.location()
	total := b.text(`[data-testid=order-total]`)
	if got := b.attr(`#amount`, "value"); "EUR "+got != total {
		t.Fatalf("the capture asks for %q, the order is %q", got, total)
	}
	b.checkPage("staff-registration")
	if os.Getenv("PORTAL_DOCS_SCREENSHOTS") == "1" {
		staffScreenshot(t, b, "staff-registration.png")
	}
	b.typeInto(`#amount`, "50.00")
	b.typeInto(`#note`, "statement 41")
	b.clickTo(`[data-testid=capture-submit]`, `[data-testid=capture-owed]`)
	if got, want := b.text(`[data-testid=staff-flash]`), fmt.Sprintf(staffview.RegistrationText.CapturedPart, "EUR 50.00", "EUR 134.50"); got != want {
		t.Fatalf("after a part: %q", got)
	}
	if st := b.attr(`[data-testid=detail-summary] [data-testid=state]`, "data-state"); st != "awaiting_payment" {
		t.Fatalf("state after a part: %s", st)
	}
	rest := b.attr(`#amount`, "value")
	if rest == "" || "EUR "+rest == total {
		t.Fatalf("the rest pre-filled: %q (total %s)", rest, total)
	}
	b.checkPage("staff-captured-part")
	// The rest, as the form offers it.
	b.typeInto(`#note`, "statement 42")
	// The part's page has a flash too: wait for what only the rest brings.
	b.clickTo(`[data-testid=capture-submit]`, `[data-testid=detail-summary] [data-testid=state][data-state=paid]`)
	if st := b.attr(`[data-testid=detail-summary] [data-testid=state]`, "data-state"); st != "paid" {
		t.Fatalf("state after the rest: %s", st)
	}
	if n := b.count(`[data-testid=capture-form]`); n != 0 {
		t.Error("a paid registration still offers the capture")
	}
	if a := b.attr(`[data-testid=audit-row]`, "data-action"); a != "payment.capture" {
		t.Fatalf("audit after the capture: %q", a)
	}
	b.checkPage("staff-captured")
	got = post.deliver(t, 3)
	if !strings.Contains(string(got[2].Data), "is confirmed") {
		t.Fatalf("third mail is not the confirmation:\n%s", got[2].Data)
	}
	// The audit log names the capture and leads to the registration.
	b.navigate("/staff/audit")
	b.waitVisible(`[data-testid=audit-table]`)
	path := strings.TrimPrefix(detail, env.Server.URL)
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if n := b.count(`[data-testid=audit-row] a[href="` + path + `"]`); n < 2 {
		t.Errorf("the audit log links %d entries to %s, want the two captures at least", n, path)
	}
	if a := b.attr(`[data-testid=audit-row]`, "data-action"); a != "payment.capture" {
		t.Errorf("newest audit entry %q, want the capture", a)
	}
	b.checkPage("staff-audit")
	b.navigate("/staff/year-report")
	b.waitVisible(`[data-testid=year-report-summary]`)
	b.checkPage("staff-year-report")
	// Its downloads, as the treasurer's browser gets them: the CSV and the
	// PDF say the one registration paid, 184.50.
	csvText := e2eRun(b, "download the year-end CSV", chromedp.Evaluate[string](
		`fetch(document.querySelector('a[href*="year-report.csv"]').href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if got, _ := handlertest.CSVFigure(recs, "Summary", "Paid orders", "Amount"); err != nil || got != "184.50" {
		t.Errorf("year-end CSV: paid orders %q (%v):\n%s", got, err, csvText)
	}
	if got, _ := handlertest.CSVFigure(recs, "Summary", "Income", "Amount"); got != "184.50" {
		t.Errorf("year-end CSV: income %q", got)
	}
	pdf64 := e2eRun(b, "download the year-end PDF", chromedp.Evaluate[string](
		`fetch(document.querySelector('a[href*="year-report.pdf"]').href).then(r => r.arrayBuffer()).then(buf => {
			let s = ""; for (const c of new Uint8Array(buf)) s += String.fromCharCode(c); return btoa(s); })`, chromedp.EvalAwaitPromise))
	pdfBytes, err := base64.StdEncoding.DecodeString(pdf64)
	if err != nil {
		t.Fatal(err)
	}
	if text := handlertest.PDFText(t, pdfBytes); !strings.Contains(text, "Year-end report") || !strings.Contains(text, "184.50") {
		t.Errorf("year-end PDF:\n%s", text)
	}
	// The open payments are empty now.
	b.navigate("/staff/open-payments")
	b.waitVisible(`[data-testid=staff-main]`)
	if n := b.count(`[data-testid=open-payment-row]`); n != 0 {
		t.Errorf("%d open payments after the rest arrived", n)
	}
	b.navigate("/staff")
	b.waitVisible(`[data-testid=overview-chart]`)
	// The cancel asks first, in the staff frame.
	b.navigate("/staff/registrations?state=paid")
	b.clickTo(`[data-testid=registration-link]`, `[data-testid=action-cancel]`)
	b.clickTo(`[data-testid=action-cancel]`, `[data-testid=staff-confirm]`)
	b.checkPage("staff-confirm")
}

// staffScreenshot writes the page at 1280 px to docs/img/name.
func staffScreenshot(t *testing.T, b *e2eBrowser, name string) {
	t.Helper()
	staffScreenshotAt(t, b, name, 1280)
}
