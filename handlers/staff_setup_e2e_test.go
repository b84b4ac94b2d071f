package handlers_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/views"
)

// TestE2EStaffSetupSettings: an administrator sets the bank account on the setup
// page in Chromium: a wrong IBAN is shown by its field, the corrected one
// is saved; deleting a membership type asks first. axe checks each state,
// and on a 390 px phone the page does not scroll sideways.
func TestE2EStaffSetupSettings(t *testing.T) {
	t.Parallel()
	env := newStaffEnv(t, dbtest.SQLite(t), envOptions{})
	env.addStaff("admin@example.org", engine.RoleAdmin)
	b := newE2EBrowser(t, env.testEnv, "staff-setup-settings", true, true)
	env.staffBrowserSignIn(b, "admin@example.org", `[data-testid=overview-states]`)
	b.navigate("/staff/setup")
	b.waitVisible(`[data-testid=payments-form]`)
	b.checkPage("staff-setup")
	b.do("phone width", chromedp.EmulateViewport(390, 900))
	if w := e2eEval[int](b, "document.documentElement.scrollWidth"); w > 390 {
		t.Errorf("the setup page is %d px wide on a 390 px phone", w)
	}
	b.do("laptop width", chromedp.EmulateViewport(1280, 900))

	b.do("choose bank transfer", chromedp.Evaluate[chromedp.Void](`document.querySelector("#pay-provider").value = "bank_transfer"`))
	b.typeInto(`#pay-creditor`, "Riverside Rowing Club")
	b.typeInto(`#pay-iban`, "DE89 3704 0044 0532 0130 01")
	b.clickTo(`[data-testid=payments-save]`, `[data-testid=error-pay-iban]`)
	b.checkPage("staff-setup-error")
	if v, _ := env.svc.PaymentSettings(t.Context(), 1); v.Provider != "" {
		t.Fatalf("a refused change was stored: %+v", v)
	}
	b.typeInto(`#pay-iban`, "DE89 3704 0044 0532 0130 00")
	b.clickTo(`[data-testid=payments-save]`, `[data-testid=staff-flash]`)
	if got := b.text(`[data-testid=pay-qr-kind]`); got != views.StaffSetupText.PayQREPC {
		t.Errorf("QR kind %q", got)
	}
	if v, _ := env.svc.PaymentSettings(t.Context(), 1); v.Provider != engine.BankTransferProvider || v.BankIBAN != "DE89370400440532013000" {
		t.Fatalf("after saving: %+v", v)
	}

	b.clickTo(`[data-testid=type-row][data-code=JUNIOR] [data-testid=type-delete]`, `[data-testid=staff-confirm]`)
	b.checkPage("staff-setup-confirm")
}
