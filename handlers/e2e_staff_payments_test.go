package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestE2EStaffPaymentsStatement: in Chromium, a treasurer signs in at the
// IdP, finds the attempt pending too long on the payments page, uploads
// the bank's camt.054, reviews the proposed match, confirms it, and the
// member's registration completes. The jobs and invitations pages pass
// axe too. PORTAL_DOCS_SCREENSHOTS=1 also writes docs/STAFF.md's
// docs/img/staff-payments.png.
func TestE2EStaffPaymentsStatement(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffBankEnv(t, dbtest.SQLite(t), true)
	order, rf := env.UnpaidDemoOrder()
	// The transfer was asked for three weeks ago: it needs attention.
	if _, err := env.DB.NewUpdate().Model((*engine.Payment)(nil)).Set("created_at = ?", clock.Now().Add(-21*24*time.Hour).UTC()).
		Where("order_id = ?", order.ID).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	b := newE2EBrowser(t, env.Env, "staff-payments", true, true)

	// Sign-in at the IdP (mockoidc answers for the queued user).
	env.IdP.Mock.QueueUser(handlertest.IdPUser("sub-treasurer", "treasurer@example.org"))
	b.navigate("/staff/login?rd=%2Fstaff%2Fpayments")
	b.click(`[data-testid=staff-message-link]`)
	b.waitVisible(`[data-testid=attention-table]`) // back from the IdP on the page asked for
	if got := b.text(`[data-testid=attention-reason]`); got != staffview.OpsText.AttentionPending {
		t.Fatalf("attention: %q", got)
	}
	b.checkPage("staff-payments")
	if os.Getenv("PORTAL_DOCS_SCREENSHOTS") == "1" {
		b.do("viewport", chromedp.EmulateViewport(1280, 900))
		shot := e2eRun(b, "screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(e2eModuleRoot(t), "docs", "img", "staff-payments.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The bank's notification, as downloaded from online banking.
	file := filepath.Join(t.TempDir(), "camt054.xml")
	err := os.WriteFile(file, handlertest.Camt054(string(handlertest.StaffCreditor.IBAN),
		handlertest.CamtCredit{Id: "E2E-1", Amount: engine.FormatAmount(order.TotalMinor), Ref: string(rf), Debtor: "Demo Household"},
		handlertest.CamtCredit{Id: "E2E-2", Amount: "25.00", Ref: "RF18539007547034", Debtor: "Unknown Sender"}), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	b.do("choose the statement", chromedp.SetUploadFiles(`#statement-file`, []string{file}))
	b.click(`[data-testid=statement-upload]`)
	b.waitVisible(`[data-testid=statement-preview]`)
	if got := b.text(`[data-testid=matched-table] [data-testid=credit-result]`); got != staffview.OpsText.LineWillComplete {
		t.Fatalf("proposed match: %q", got)
	}
	if n := b.count(`[data-testid=unmatched-table] [data-testid=credit-row]`); n != 1 {
		t.Fatalf("%d unmatched credits, want 1", n)
	}
	b.checkPage("staff-statement-preview")
	if got := env.OrderStatus(order.ID); got != engine.OrderUnpaid {
		t.Fatalf("the preview changed the order: %s", got)
	}

	b.click(`[data-testid=statement-capture]`)
	b.waitVisible(`[data-testid=statement-result]`)
	if got := b.text(`[data-testid=matched-table] [data-testid=credit-result]`); got != staffview.OpsText.LineCompleted {
		t.Fatalf("capture: %q", got)
	}
	b.checkPage("staff-statement-result")
	if got := env.OrderStatus(order.ID); got != engine.OrderPaid {
		t.Fatalf("order after the capture: %s", got)
	}
	var confirmations int64
	confirmations, err = env.DB.NewSelect().Model((*engine.OutboxMessage)(nil)).Where("kind = ?", "membership_confirmation").Count(t.Context())
	if err != nil || confirmations != 1 {
		t.Fatalf("%d confirmations queued (%v), want 1", confirmations, err)
	}
	b.click(`[data-testid=back-to-payments]`)
	b.waitVisible(`[data-testid=attention-empty]`)

	// The unknown sender's credit was kept: the treasurer returns it with a
	// note, after confirming.
	if st := b.attr(`[data-testid=stored-credit]`, "data-state"); st != "unmatched" {
		t.Fatalf("kept credit: %q", st)
	}
	b.click(`[data-testid=stored-credit-resolve]`)
	b.waitVisible(`[data-testid=credit-resolve-form]`)
	b.checkPage("staff-payments-credit")
	b.click(`[data-testid=credit-resolve-form] input[value=returned]`)
	b.typeInto(`[data-testid=credit-resolve-form] input[name=note]`, "not a member; sent back")
	b.clickTo(`[data-testid=credit-resolve-submit]`, `[data-testid=staff-confirm]`)
	b.clickTo(`[data-testid=staff-confirm-yes]`, `[data-testid=staff-flash]`)
	if st := b.attr(`[data-testid=stored-credit]`, "data-state"); st != "returned" {
		t.Fatalf("credit after returning it: %q", st)
	}

	for _, p := range []struct{ path, ready string }{{"/staff/jobs", "jobs-empty"}, {"/staff/invitations", "import-form"}} {
		b.navigate(p.path)
		b.waitVisible(`[data-testid=` + p.ready + `]`)
		b.checkPage(strings.TrimPrefix(strings.ReplaceAll(p.path, "/", "-"), "-"))
	}
}

// TestE2EStaffSetup: the administrator's setup page with a price
// calculation, and the processes page, pass axe at both widths.
func TestE2EStaffSetup(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	b := newE2EBrowser(t, env.Env, "staff-setup", true, true)
	env.IdP.Mock.QueueUser(handlertest.IdPUser("sub-admin", "admin@example.org"))
	b.navigate("/staff/login?rd=%2Fstaff%2Fsetup%2Fmemberships")
	b.click(`[data-testid=staff-message-link]`)
	b.waitVisible(`[data-testid=calc-form]`)
	b.do("choose a household", chromedp.SetValue(`#calc-type-1`, "1"), chromedp.SetValue(`#calc-member-1`, "RENEWAL"),
		chromedp.SetValue(`#calc-type-2`, "2"))
	b.click(`[data-testid=calc-submit]`)
	b.waitVisible(`[data-testid=calc-total]`)
	b.checkPage("staff-setup")
	b.navigate("/staff/processes")
	b.waitVisible(`[data-testid=definition-steps]`)
	b.checkPage("staff-processes")
}
