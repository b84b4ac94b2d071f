package handlers_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine/dbtest"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestE2EStaffSetupSettings: an administrator sets the bank account on the setup
// page in Chromium: a wrong IBAN is shown by its field, the corrected one
// is saved; deleting a membership type asks first. axe checks each state;
// on a 390 px phone and at 1280 px no section scrolls sideways and the
// staff table's "Disable" buttons stay inside the table.
func TestE2EStaffSetupSettings(t *testing.T) {
	t.Parallel()
	env := handlertest.NewStaffEnv(t, dbtest.SQLite(t), handlertest.Options{})
	env.AddStaff("admin@example.org", staff.RoleAdmin)
	b := newE2EBrowser(t, env.Env, "staff-setup-settings", true, true)
	staffBrowserSignIn(env, b, "admin@example.org", `[data-testid=overview-states]`)
	env.AddStaff("registrar.with.a.long.address@riverside-rowing.example", staff.RoleRegistrar)
	for _, width := range []int64{390, 1280} {
		b.do("width", chromedp.EmulateViewport(width, 900))
		for _, section := range []string{"", "/organisation", "/languages", "/payments", "/messages", "/memberships", "/staff", "/api-keys"} {
			b.navigate("/staff/setup" + section)
			b.waitVisible(`[data-testid=staff-main]`)
			if w := e2eEval[int](b, "document.documentElement.scrollWidth"); w > int(width) {
				t.Errorf("the setup page %q is %d px wide on a %d px screen", section, w, width)
			}
			if section == "/staff" {
				// Every Disable button ends inside the table.
				out := e2eEval[int](b, `(() => { const t = document.querySelector("[data-testid=staff-table]").getBoundingClientRect();
					return [...document.querySelectorAll("[data-testid=staff-disable]")].filter(b => b.getBoundingClientRect().right > t.right + 0.5).length })()`)
				if n := e2eEval[int](b, `document.querySelectorAll("[data-testid=staff-disable]").length`); out != 0 || n < 2 {
					t.Errorf("%d of %d Disable buttons stick out of the staff table at %d px", out, n, width)
				}
			}
		}
	}
	b.navigate("/staff/setup/payments")
	b.waitVisible(`[data-testid=payments-form]`)
	b.checkPage("staff-setup")

	b.do("choose bank transfer", chromedp.Evaluate[chromedp.Void](`document.querySelector("#pay-provider").value = "bank_transfer"`))
	b.typeInto(`#pay-creditor`, "Riverside Rowing Club")
	b.typeInto(`#pay-iban`, "DE89 3704 0044 0532 0130 01")
	b.clickTo(`[data-testid=payments-save]`, `[data-testid=error-pay-iban]`)
	b.checkPage("staff-setup-error")
	if v, _ := settings.Of(env.Engine).PaymentSettings(t.Context(), 1); v.Provider != "" {
		t.Fatalf("a refused change was stored: %+v", v)
	}
	b.typeInto(`#pay-iban`, "DE89 3704 0044 0532 0130 00")
	b.clickTo(`[data-testid=payments-save]`, `[data-testid=staff-flash]`)
	if got := b.text(`[data-testid=pay-qr-kind]`); got != staffview.SetupText.PayQREPC {
		t.Errorf("QR kind %q", got)
	}
	if v, _ := settings.Of(env.Engine).PaymentSettings(t.Context(), 1); v.Provider != payment.BankTransferProvider || v.BankIBAN != "DE89370400440532013000" {
		t.Fatalf("after saving: %+v", v)
	}

	b.navigate("/staff/setup/memberships")
	b.clickTo(`[data-testid=type-row][data-code=JUNIOR] [data-testid=type-delete]`, `[data-testid=staff-confirm]`)
	b.checkPage("staff-setup-confirm")
}
