package handlers_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/views/staffview"
)

// A treasurer is told what happened to a bank transfer: the RF reference
// members write finds the registration, the page shows it and asks for
// what is owed; a part is called a part with the rest still owed; the
// completing form sent again says paid, not "does not match".
func TestStaffPartialCaptureToldTruthfully(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, rf := env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)

		// Found by the RF reference as a member writes it (lower case,
		// grouped), not only by PO-….
		written := strings.ToLower(rf.String())
		if p := env.get(tr, "/staff/registrations?q="+url.QueryEscape(written)); p.testid("registration-row").Length() != 1 {
			t.Fatalf("search by %q: %d rows", written, p.testid("registration-row").Length())
		}
		if p := env.get(tr, "/staff/registrations?q=RF00+0000+0000"); p.testid("registration-row").Length() != 0 {
			t.Fatal("another RF reference finds the registration")
		}

		total := engine.FormatAmount(order.TotalMinor)
		d := env.get(tr, detail)
		if d.testid("order-transfer-reference").Text() != rf.String() || d.testid("capture-amount").AttrOr("value", "") != total ||
			d.testid("capture-owed").Length() != 0 {
			t.Fatalf("detail: reference %q, amount %q", d.testid("order-transfer-reference").Text(), d.testid("capture-amount").AttrOr("value", ""))
		}

		// A part: said so, with what is still owed, pre-filled.
		part := url.Values{"amount": {"1.00"}, "booked": {"2026-01-02"}}
		expectRedirect(t, env.post(tr, detail+"/capture", part), detail+"?done=captured-partial")
		d = env.get(tr, detail+"?done=captured-partial")
		rest := engine.FormatAmount(order.TotalMinor - 100)
		if d.testid("staff-flash").Text() != fmt.Sprintf(staffview.RegistrationText.CapturedPart, engine.FormatMoney(100, order.Currency), engine.FormatMoney(order.TotalMinor-100, order.Currency)) || d.testid("capture-amount").AttrOr("value", "") != rest ||
			!strings.Contains(d.testid("capture-owed").Text(), engine.FormatMoney(order.TotalMinor-100, order.Currency)) {
			t.Fatalf("after a part: flash %q, amount %q, owed %q", d.testid("staff-flash").Text(), d.testid("capture-amount").AttrOr("value", ""), d.testid("capture-owed").Text())
		}

		// The rest completes it; the same form again finds it paid.
		form := url.Values{"amount": {rest}, "booked": {"2026-01-03"}}
		expectRedirect(t, env.post(tr, detail+"/capture", form), detail+"?done=captured")
		expectRedirect(t, env.post(tr, detail+"/capture", form), detail+"?done=captured")
		if env.orderStatus(order.ID) != engine.OrderPaid {
			t.Fatalf("order %s", env.orderStatus(order.ID))
		}
		if n := env.count((*engine.PaymentEvent)(nil), "event_type = ?", "bank_transfer.capture"); n != 2 {
			t.Fatalf("%d capture events, want 2", n)
		}
	})
}
