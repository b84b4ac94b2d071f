package staff_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/payment"
	"portal/engine/payment/settings"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestStaffSetupPaymentMethods: the setup page's payment methods section
// shows the stored methods; an invalid Creditor Identifier, collection day
// or return fee is named by its field, the form shows what was typed and
// nothing changes; a valid change
// is stored (the default first), audited, and offered to the members.
func TestStaffSetupPaymentMethods(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffEnv(t, db, handlertest.Options{})
		ctx := t.Context()
		env.AddStaff("admin@example.org", staff.RoleAdmin)
		admin := env.MustStaffSignIn("admin@example.org", "/staff")
		origin := []string{"Origin", env.Server.URL}
		if _, err := settings.Of(env.Engine).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{Provider: handlertest.StringPtr("bank_transfer"),
			BankCreditorName: handlertest.StringPtr("TV Demo 1848 e.V."), BankIBAN: handlertest.StringPtr("DE89370400440532013000")}); err != nil {
			t.Fatal(err)
		}

		p := env.Get(admin, "/staff/setup/payments")
		section := p.TestID("payment-methods-section")
		if section.Length() != 1 || !p.TestID("pm-method-bank_transfer").Is("[checked]") || p.TestID("pm-method-direct_debit").Is("[checked]") ||
			p.Doc.Find("#pm-default option[selected]").AttrOr("value", "") != "bank_transfer" || p.Doc.Find("#pm-prenotification").AttrOr("value", "") != "14" ||
			p.Doc.Find("#pm-collection-day").AttrOr("value", "x") != "" || p.Doc.Find("#pm-return-fee").AttrOr("value", "x") != "" {
			t.Fatalf("payment methods section:\n%s", section.Text())
		}
		form := url.Values{"methods": {"bank_transfer", "direct_debit"}, "defaultMethod": {"direct_debit"},
			"debitCreditorId": {"DE97ZZZ09999999999"}, "debitPrenotificationDays": {"5"}, "debitFileVersion": {"pain.008.001.02"},
			"debitCollectionDay": {"31"}, "debitReturnFee": {"3,50"}}
		bad := env.Post(admin, "/staff/setup/payment-methods", form, origin...)
		if bad.Status != http.StatusUnprocessableEntity || bad.TestID("error-pm-creditor-id").Length() != 1 ||
			bad.Doc.Find("#pm-creditor-id").AttrOr("value", "") != "DE97ZZZ09999999999" || !bad.TestID("pm-method-direct_debit").Is("[checked]") ||
			bad.TestID("error-pm-collection-day").Length() != 1 || bad.Doc.Find("#pm-collection-day").AttrOr("value", "") != "31" ||
			bad.TestID("error-pm-return-fee").Length() != 1 || bad.Doc.Find("#pm-return-fee").AttrOr("value", "") != "3,50" {
			t.Fatalf("invalid creditor identifier: %d\n%s", bad.Status, bad.TestID("payment-methods-section").Text())
		}
		if v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1); len(v.Methods) != 1 || v.DebitCreditorID != "" || env.AuditActions("payment_settings.update") != 0 {
			t.Fatalf("a refused change was stored: %+v", v)
		}
		form.Set("debitCreditorId", "DE98ZZZ09999999999")
		form.Set("debitCollectionDay", "15")
		form.Set("debitReturnFee", "3.50")
		// Direct debit may be the default (API 3.0.0).
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payment-methods", form, origin...), "/staff/setup/payments?done=payments-saved")
		if v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1); !slices.Equal(v.Methods, []string{"direct_debit", "bank_transfer"}) || v.Provider != "direct_debit" {
			t.Fatalf("direct debit as the default: %+v", v)
		}
		form.Set("defaultMethod", "bank_transfer")
		handlertest.ExpectRedirect(t, env.Post(admin, "/staff/setup/payment-methods", form, origin...), "/staff/setup/payments?done=payments-saved")
		v, _ := settings.Of(env.Engine).PaymentSettings(ctx, 1)
		if !slices.Equal(v.Methods, []string{"bank_transfer", "direct_debit"}) || v.Provider != "bank_transfer" || v.DebitCreditorID != "DE98ZZZ09999999999" ||
			v.DebitPrenotificationDays != 5 || v.DebitFileVersion != "pain.008.001.02" || v.DebitCollectionDay != 15 || v.DebitReturnFeeMinor != 350 {
			t.Fatalf("stored %+v", v)
		}
		if p := env.Get(admin, "/staff/setup/payments"); p.Doc.Find("#pm-collection-day").AttrOr("value", "") != "15" || p.Doc.Find("#pm-return-fee").AttrOr("value", "") != "3.50" {
			t.Fatalf("the stored collection day and fee are not shown:\n%s", p.TestID("payment-methods-section").Text())
		}
		rows := env.AuditRows("payment_settings.update")
		if len(rows) != 2 || !strings.Contains(rows[0].AfterJSON, "DE98ZZZ09999999999") {
			t.Fatalf("audit %+v", rows)
		}
		if m, _ := payment.Of(env.Engine).PaymentMethods(ctx, 1, engine.DemoPeriodID); !slices.Equal(m, []string{"bank_transfer", "direct_debit"}) {
			t.Fatalf("members are offered %v", m)
		}
		// A viewer cannot change them.
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		if res := env.Post(viewer, "/staff/setup/payment-methods", form, origin...); res.Status != http.StatusForbidden {
			t.Fatalf("a viewer's change: %d", res.Status)
		}
	})
}
