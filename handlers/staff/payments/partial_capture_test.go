package payments_test

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
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// A treasurer is told what happened to a bank transfer: the RF reference
// members write finds the registration, the page shows it and asks for
// what is owed; a part is called a part with the rest still owed; the
// completing form sent again says paid, not "does not match".
func TestStaffPartialCaptureToldTruthfully(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, rf := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)

		// Found by the RF reference as a member writes it (lower case,
		// grouped), not only by PO-….
		written := strings.ToLower(rf.String())
		if p := env.Get(tr, "/staff/registrations?q="+url.QueryEscape(written)); p.TestID("registration-row").Length() != 1 {
			t.Fatalf("search by %q: %d rows", written, p.TestID("registration-row").Length())
		}
		if p := env.Get(tr, "/staff/registrations?q=RF00+0000+0000"); p.TestID("registration-row").Length() != 0 {
			t.Fatal("another RF reference finds the registration")
		}

		total := engine.FormatAmount(order.TotalMinor)
		d := env.Get(tr, detail)
		if d.TestID("order-transfer-reference").Text() != rf.String() || d.TestID("capture-amount").AttrOr("value", "") != total ||
			d.TestID("capture-owed").Length() != 0 {
			t.Fatalf("detail: reference %q, amount %q", d.TestID("order-transfer-reference").Text(), d.TestID("capture-amount").AttrOr("value", ""))
		}

		// A part: said so, with what is still owed, pre-filled.
		part := url.Values{"amount": {"1.00"}, "booked": {"2026-01-02"}}
		handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", part), detail+"?done=captured-partial")
		d = env.Get(tr, detail+"?done=captured-partial")
		rest := engine.FormatAmount(order.TotalMinor - 100)
		if d.TestID("staff-flash").Text() != fmt.Sprintf(staffview.RegistrationText.CapturedPart, engine.FormatMoney(100, order.Currency), engine.FormatMoney(order.TotalMinor-100, order.Currency)) || d.TestID("capture-amount").AttrOr("value", "") != rest ||
			!strings.Contains(d.TestID("capture-owed").Text(), engine.FormatMoney(order.TotalMinor-100, order.Currency)) {
			t.Fatalf("after a part: flash %q, amount %q, owed %q", d.TestID("staff-flash").Text(), d.TestID("capture-amount").AttrOr("value", ""), d.TestID("capture-owed").Text())
		}

		// The rest completes it; the same form again finds it paid.
		form := url.Values{"amount": {rest}, "booked": {"2026-01-03"}}
		handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", form), detail+"?done=captured")
		handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", form), detail+"?done=captured")
		if env.OrderStatus(order.ID) != engine.OrderPaid {
			t.Fatalf("order %s", env.OrderStatus(order.ID))
		}
		if n := env.Count((*engine.PaymentEvent)(nil), "event_type = ?", "bank_transfer.capture"); n != 2 {
			t.Fatalf("%d capture events, want 2", n)
		}
	})
}
