package payments_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/bankstatement"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffResolveUnmatchedCredit: a statement credit the import cannot
// match is kept and listed on the payments page (counted on the overview);
// a viewer sees it without the form; the treasurer is asked first, then
// assigns it to the registration, which completes; posting the confirmed
// form again changes nothing more. Incomplete decisions are refused and
// change nothing.
func TestStaffResolveUnmatchedCredit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")

		// The member paid the right amount with a reference of no open payment.
		file := handlertest.Camt054(string(handlertest.StaffCreditor.IBAN), handlertest.CamtCredit{Id: "K-1", Amount: engine.FormatAmount(order.TotalMinor),
			Ref: "RF18539007547034", Debtor: "Demo Household"})
		prev := env.PostFile(tr, "/staff/payments/statement", nil, "camt054.xml", file)
		if prev.TestID("statement-capture").Text() != staffview.OpsText.KeepButton {
			t.Fatalf("preview of an unmatched credit offers %q", prev.TestID("statement-capture").Text())
		}
		if env.Count((*bankstatement.BankCredit)(nil)) != 0 {
			t.Fatal("the preview kept the credit")
		}
		copyOf := prev.Doc.Find(`input[name="statement"]`).AttrOr("value", "")
		done := env.PostFile(tr, "/staff/payments/statement", map[string]string{"statement": copyOf, "capture": "1"}, "", nil)
		if !strings.Contains(done.TestID("unmatched-table").Text(), staffview.OpsText.LineKept) {
			t.Fatalf("result: %s", done.TestID("staff-main").Text())
		}

		p := env.Get(tr, "/staff/payments")
		credit := p.TestID("stored-credit")
		if credit.Length() != 1 || credit.AttrOr("data-state", "") != "unmatched" || p.TestID("credits-empty").Length() != 0 ||
			!strings.Contains(credit.Text(), "Demo Household") || credit.Find(`[data-testid="credit-resolve-form"]`).Length() != 1 {
			t.Fatalf("payments page: %s", p.TestID("stored-credits").Text())
		}
		resolve := credit.Find(`[data-testid="credit-resolve-form"]`).AttrOr("action", "")
		if v := env.Get(viewer, "/staff/payments"); v.TestID("stored-credit").Length() != 1 || v.TestID("credit-resolve-form").Length() != 0 {
			t.Fatalf("viewer: %d credits, %d forms", v.TestID("stored-credit").Length(), v.TestID("credit-resolve-form").Length())
		}
		if ov := env.Get(tr, "/staff"); !strings.HasSuffix(strings.TrimSpace(ov.TestID("overview-credits").Text()), ": 1") {
			t.Fatalf("overview counts %q", ov.TestID("overview-credits").Text())
		}

		// Incomplete decisions: refused, nothing changed.
		for _, form := range []url.Values{
			{"resolution": {"assigned"}},
			{"resolution": {"returned"}, "confirmed": {"1"}},
			{"resolution": {"sideways"}, "note": {"x"}, "confirmed": {"1"}},
		} {
			if res := env.Post(tr, resolve, form); res.Status != http.StatusUnprocessableEntity || res.TestID("staff-message-text").Text() == "" {
				t.Errorf("%v: %d", form, res.Status)
			}
		}
		if res := env.Post(tr, "/staff/payments/credits/99999/resolve", url.Values{"resolution": {"ignored"}, "note": {"x"}, "confirmed": {"1"}}); res.Status != http.StatusNotFound {
			t.Errorf("unknown credit: %d", res.Status)
		}
		inst := strconv.FormatInt(order.ProcessInstanceID, 10)
		if ask := env.Post(tr, resolve, url.Values{"resolution": {"assigned"}, "payment": {inst}}); ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("not asked first: %d %s", ask.Status, ask.Body)
		}
		if env.OrderStatus(order.ID) != engine.OrderUnpaid || env.AuditActions("credit.assign") != 0 {
			t.Fatal("changed before confirming")
		}

		// Confirmed: captured, completed, audited; posted again: nothing more.
		form := url.Values{"resolution": {"assigned"}, "payment": {inst}, "note": {"reference typo"}, "confirmed": {"1"}}
		handlertest.ExpectRedirect(t, env.Post(tr, resolve, form), "/staff/payments?done=credit-assigned")
		if env.OrderStatus(order.ID) != engine.OrderPaid || env.AuditActions("credit.assign") != 1 {
			t.Fatalf("after the assignment: order %s, %d audit entries", env.OrderStatus(order.ID), env.AuditActions("credit.assign"))
		}
		handlertest.ExpectRedirect(t, env.Post(tr, resolve, form), "/staff/payments?done=credit-already")
		if env.AuditActions("credit.assign") != 1 || env.Count((*engine.PaymentEvent)(nil), "event_id LIKE ?", "bank:%") != 1 {
			t.Fatal("the second post changed something")
		}
		p = env.Get(tr, "/staff/payments?done=credit-assigned")
		if p.TestID("staff-flash").Text() != staffview.OpsText.CreditAssigned || p.TestID("credits-empty").Length() != 1 ||
			p.TestID("stored-credit").AttrOr("data-state", "") != "assigned" || p.TestID("stored-credit-resolved").Find("a").Length() != 1 {
			t.Fatalf("after: %s", p.TestID("staff-main").Text())
		}
	})
}
