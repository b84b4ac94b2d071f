package handlers_test

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
		env := newStaffBankEnv(t, db, true)
		order, _ := env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		env.addStaff("viewer@example.org", staff.RoleViewer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")

		// The member paid the right amount with a reference of no open payment.
		file := camt054(string(staffCreditor.IBAN), camtCredit{id: "K-1", amount: engine.FormatAmount(order.TotalMinor),
			ref: "RF18539007547034", debtor: "Demo Household"})
		prev := env.postFile(tr, "/staff/payments/statement", nil, "camt054.xml", file)
		if prev.testid("statement-capture").Text() != staffview.OpsText.KeepButton {
			t.Fatalf("preview of an unmatched credit offers %q", prev.testid("statement-capture").Text())
		}
		if env.count((*bankstatement.BankCredit)(nil)) != 0 {
			t.Fatal("the preview kept the credit")
		}
		copyOf := prev.doc.Find(`input[name="statement"]`).AttrOr("value", "")
		done := env.postFile(tr, "/staff/payments/statement", map[string]string{"statement": copyOf, "capture": "1"}, "", nil)
		if !strings.Contains(done.testid("unmatched-table").Text(), staffview.OpsText.LineKept) {
			t.Fatalf("result: %s", done.testid("staff-main").Text())
		}

		p := env.get(tr, "/staff/payments")
		credit := p.testid("stored-credit")
		if credit.Length() != 1 || credit.AttrOr("data-state", "") != "unmatched" || p.testid("credits-empty").Length() != 0 ||
			!strings.Contains(credit.Text(), "Demo Household") || credit.Find(`[data-testid="credit-resolve-form"]`).Length() != 1 {
			t.Fatalf("payments page: %s", p.testid("stored-credits").Text())
		}
		resolve := credit.Find(`[data-testid="credit-resolve-form"]`).AttrOr("action", "")
		if v := env.get(viewer, "/staff/payments"); v.testid("stored-credit").Length() != 1 || v.testid("credit-resolve-form").Length() != 0 {
			t.Fatalf("viewer: %d credits, %d forms", v.testid("stored-credit").Length(), v.testid("credit-resolve-form").Length())
		}
		if ov := env.get(tr, "/staff"); !strings.HasSuffix(strings.TrimSpace(ov.testid("overview-credits").Text()), ": 1") {
			t.Fatalf("overview counts %q", ov.testid("overview-credits").Text())
		}

		// Incomplete decisions: refused, nothing changed.
		for _, form := range []url.Values{
			{"resolution": {"assigned"}},
			{"resolution": {"returned"}, "confirmed": {"1"}},
			{"resolution": {"sideways"}, "note": {"x"}, "confirmed": {"1"}},
		} {
			if res := env.post(tr, resolve, form); res.status != http.StatusUnprocessableEntity || res.testid("staff-message-text").Text() == "" {
				t.Errorf("%v: %d", form, res.status)
			}
		}
		if res := env.post(tr, "/staff/payments/credits/99999/resolve", url.Values{"resolution": {"ignored"}, "note": {"x"}, "confirmed": {"1"}}); res.status != http.StatusNotFound {
			t.Errorf("unknown credit: %d", res.status)
		}
		inst := strconv.FormatInt(order.ProcessInstanceID, 10)
		if ask := env.post(tr, resolve, url.Values{"resolution": {"assigned"}, "payment": {inst}}); ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("not asked first: %d %s", ask.status, ask.body)
		}
		if env.orderStatus(order.ID) != engine.OrderUnpaid || env.auditActions("credit.assign") != 0 {
			t.Fatal("changed before confirming")
		}

		// Confirmed: captured, completed, audited; posted again: nothing more.
		form := url.Values{"resolution": {"assigned"}, "payment": {inst}, "note": {"reference typo"}, "confirmed": {"1"}}
		expectRedirect(t, env.post(tr, resolve, form), "/staff/payments?done=credit-assigned")
		if env.orderStatus(order.ID) != engine.OrderPaid || env.auditActions("credit.assign") != 1 {
			t.Fatalf("after the assignment: order %s, %d audit entries", env.orderStatus(order.ID), env.auditActions("credit.assign"))
		}
		expectRedirect(t, env.post(tr, resolve, form), "/staff/payments?done=credit-already")
		if env.auditActions("credit.assign") != 1 || env.count((*engine.PaymentEvent)(nil), "event_id LIKE ?", "bank:%") != 1 {
			t.Fatal("the second post changed something")
		}
		p = env.get(tr, "/staff/payments?done=credit-assigned")
		if p.testid("staff-flash").Text() != staffview.OpsText.CreditAssigned || p.testid("credits-empty").Length() != 1 ||
			p.testid("stored-credit").AttrOr("data-state", "") != "assigned" || p.testid("stored-credit-resolved").Find("a").Length() != 1 {
			t.Fatalf("after: %s", p.testid("staff-main").Text())
		}
	})
}

// count counts the rows of model matching where (all without one).
func (env *staffEnv) count(model any, where ...any) int {
	env.t.Helper()
	q := env.db.NewSelect().Model(model)
	if len(where) > 0 {
		q = q.Where(where[0].(string), where[1:]...)
	}
	n, err := q.Count(env.t.Context())
	if err != nil {
		env.t.Fatal(err)
	}
	return int(n)
}
