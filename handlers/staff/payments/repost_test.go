package payments_test

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestStaffCaptureTwiceAuditsOnce: a partial capture posted twice (the back
// button) records the money once and writes one audit entry.
func TestStaffCaptureTwiceAuditsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)
		form := url.Values{"amount": {"1.00"}, "booked": {"2026-01-02"}, "note": {"first part"}}
		for range 2 {
			handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", form), detail+"?done=captured-partial")
		}
		if n := env.AuditActions("payment.capture"); n != 1 {
			t.Fatalf("%d audit entries for one capture posted twice", n)
		}
		if n := env.Count((*engine.PaymentEvent)(nil), "event_type = ?", "bank_transfer.capture"); n != 1 {
			t.Fatalf("%d capture events", n)
		}
	})
}

// TestStaffResetTwiceAuditsOnce: a confirmed reset posted twice (a double
// click) resets once and writes one audit entry.
func TestStaffResetTwiceAuditsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.MustStaffSignIn("registrar@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)
		for range 2 {
			handlertest.ExpectRedirect(t, env.Post(reg, detail+"/reset", url.Values{"confirmed": {"1"}}), detail+"?done=reset")
		}
		if n := env.AuditActions("registration.reset"); n != 1 {
			t.Fatalf("%d audit entries for one reset posted twice", n)
		}
		if env.OrderStatus(order.ID) != engine.OrderCancelled {
			t.Fatalf("order %s after the reset", env.OrderStatus(order.ID))
		}
	})
}
