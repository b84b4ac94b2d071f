package handlers_test

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
)

// TestStaffCaptureTwiceAuditsOnce: a partial capture posted twice (the back
// button) records the money once and writes one audit entry.
func TestStaffCaptureTwiceAuditsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, _ := env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)
		form := url.Values{"amount": {"1.00"}, "booked": {"2026-01-02"}, "note": {"first part"}}
		for range 2 {
			expectRedirect(t, env.post(tr, detail+"/capture", form), detail+"?done=captured-partial")
		}
		if n := env.auditActions("payment.capture"); n != 1 {
			t.Fatalf("%d audit entries for one capture posted twice", n)
		}
		if n := env.count((*engine.PaymentEvent)(nil), "event_type = ?", "bank_transfer.capture"); n != 1 {
			t.Fatalf("%d capture events", n)
		}
	})
}

// TestStaffResetTwiceAuditsOnce: a confirmed reset posted twice (a double
// click) resets once and writes one audit entry.
func TestStaffResetTwiceAuditsOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, _ := env.unpaidDemoOrder()
		env.addStaff("registrar@example.org", staff.RoleRegistrar)
		reg := env.mustStaffSignIn("registrar@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)
		for range 2 {
			expectRedirect(t, env.post(reg, detail+"/reset", url.Values{"confirmed": {"1"}}), detail+"?done=reset")
		}
		if n := env.auditActions("registration.reset"); n != 1 {
			t.Fatalf("%d audit entries for one reset posted twice", n)
		}
		if env.orderStatus(order.ID) != engine.OrderCancelled {
			t.Fatalf("order %s after the reset", env.orderStatus(order.ID))
		}
	})
}
