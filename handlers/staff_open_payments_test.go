package handlers_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/views/staffview"
)

// The treasurer's open payments: an unpaid order with what is still owed
// after a part arrived, its RF reference, days since commit, reminders
// and the last message; not once paid or cancelled, nor another club's;
// the same rows as CSV with formulas neutralised; for treasurers only.
func TestStaffOpenPaymentsList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, rf := env.unpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")

		// A part arrived; the order was committed ten days ago and
		// reminded since.
		expectRedirect(t, env.post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.srv.URL), "/staff/registrations/"+reg+"?done=captured-partial")
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("created_at = ?", clock.Now().UTC().Add(-10*24*time.Hour-time.Hour)).
			Where("id = ?", order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := message.QueueUnpaidReminders(ctx, db, clock.Now()); err != nil || n != 1 {
			t.Fatalf("reminders: %d %v", n, err)
		}
		// A member's name that a spreadsheet would run as a formula.
		if _, err := db.NewUpdate().Model((*engine.Person)(nil)).Set("first_name = ?", `=HYPERLINK("http://evil.example")`).
			Where("id = (SELECT MIN(person_id) FROM user_persons WHERE user_key = ?)", order.UserKey).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		p := env.get(tr, "/staff/open-payments")
		rows := p.testid("open-payment-row")
		if p.status != http.StatusOK || rows.Length() != 1 || rows.AttrOr("data-registration", "") != reg {
			t.Fatalf("list: %d, %d rows: %s", p.status, rows.Length(), p.testid("staff-main").Text())
		}
		owed := engine.FormatAmount(order.TotalMinor - 100)
		if got := p.testid("open-payment-owed").Text(); !strings.Contains(strings.ReplaceAll(got, "\u00a0", " "), owed) {
			t.Errorf("owed %q, want %s", got, owed)
		}
		if got := p.testid("open-payment-rf").Text(); got != rf.String() {
			t.Errorf("RF %q, want %q", got, rf.String())
		}
		if got := p.testid("open-payment-days").Text(); got != "10" {
			t.Errorf("days %q, want 10", got)
		}
		if got := p.testid("open-payment-reminders").Text(); got != "1" {
			t.Errorf("reminders %q, want 1", got)
		}
		if got := p.testid("open-payment-last-message").Text(); !strings.Contains(got, staffview.RegistrationText.MsgReminder) {
			t.Errorf("last message %q", got)
		}
		// Filters: unpaid for more than 10 days keeps it, 11 does not;
		// reminded at least twice does not.
		for q, want := range map[string]int{"unpaid=10": 1, "unpaid=11": 0, "reminders=1&sort=owed": 1, "reminders=2": 0} {
			if n := env.get(tr, "/staff/open-payments?"+q).testid("open-payment-row").Length(); n != want {
				t.Errorf("?%s: %d rows, want %d", q, n, want)
			}
		}
		if p := env.get(tr, "/staff/open-payments?sort=nonsense"); p.status != http.StatusBadRequest {
			t.Errorf("unknown sort: %d", p.status)
		}

		// The CSV has the same row, the formula neutralised.
		res := env.get(tr, "/staff/open-payments.csv")
		recs, err := csv.NewReader(strings.NewReader(string(res.body))).ReadAll()
		if err != nil || res.status != http.StatusOK || len(recs) != 2 {
			t.Fatalf("csv: %d %v %q", res.status, err, res.body)
		}
		head := map[string]int{}
		for i, h := range recs[0] {
			head[h] = i
		}
		row := recs[1]
		if row[head["registration"]] != reg || row[head["owed"]] != owed || row[head["rf_reference"]] != rf.String() ||
			row[head["days_unpaid"]] != "10" || row[head["reminders"]] != "1" || row[head["last_message"]] != string(message.KindUnpaidReminder) {
			t.Errorf("csv row %q", row)
		}
		if h := row[head["household"]]; !strings.HasPrefix(h, `'=HYPERLINK`) {
			t.Errorf("household %q not neutralised", h)
		}

		// The overview's "awaiting payment" leads to the list.
		ov := env.get(tr, "/staff")
		if href := ov.doc.Find(`[data-state="awaiting_payment"] a`).AttrOr("href", ""); !strings.HasPrefix(href, "/staff/open-payments?period=") {
			t.Errorf("overview links awaiting payment to %q", href)
		}

		// Viewers and registrars may not see who owes what.
		for _, r := range []staff.StaffRole{staff.RoleViewer, staff.RoleRegistrar} {
			env.addStaff(string(r)+"@example.org", r)
			c := env.mustStaffSignIn(string(r)+"@example.org", "/staff")
			for _, path := range []string{"/staff/open-payments", "/staff/open-payments.csv"} {
				if p := env.get(c, path); p.status != http.StatusForbidden {
					t.Errorf("%s %s: %d", r, path, p.status)
				}
			}
		}

		// Paid or cancelled: gone from the list.
		for _, st := range []engine.OrderStatus{engine.OrderPaid, engine.OrderCancelled} {
			setOrderStatus(t, db, order.ID, st)
			if n := env.get(tr, "/staff/open-payments").testid("open-payment-row").Length(); n != 0 {
				t.Errorf("a %s order is listed", st)
			}
		}
		setOrderStatus(t, db, order.ID, engine.OrderUnpaid)

		// Another club's unpaid order is not this club's to chase.
		if _, err := db.NewInsert().Model(&engine.Organisation{ID: 2, Name: "Hillside Hockey Club", Slug: "hillside", DefaultLanguage: "en"}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("organisation_id = 2").Where("id = ?", order.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if n := env.get(tr, "/staff/open-payments").testid("open-payment-row").Length(); n != 0 {
			t.Errorf("another club's order is listed")
		}
	})
}

func setOrderStatus(t *testing.T, db *bun.DB, id int64, st engine.OrderStatus) {
	t.Helper()
	if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", st).Where("id = ?", id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The payment link sent again to the selected registrations: once each
// however often the form names one, audited as from the registration's
// page; one no longer waiting for payment is skipped; refused cross-site.
func TestStaffOpenPaymentsResendLinks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, _ := env.unpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		links := func() int {
			return env.count((*engine.OutboxMessage)(nil), "kind = ? AND dedup_key LIKE ?", payment.KindPaymentLink,
				string(payment.KindPaymentLink)+":order:"+strconv.FormatInt(order.ID, 10)+":resend:%")
		}

		cross := env.post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg}},
			"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		if cross.status != http.StatusForbidden || links() != 0 {
			t.Fatalf("cross-site: %d, %d links", cross.status, links())
		}
		if p := env.post(tr, "/staff/open-payments/resend-payment-link", url.Values{}, "Origin", env.srv.URL); p.status != http.StatusUnprocessableEntity {
			t.Fatalf("nothing selected: %d", p.status)
		}

		// Named twice, and an unknown registration.
		res := env.post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg, reg, "999999"}}, "Origin", env.srv.URL)
		expectRedirect(t, res, "/staff/open-payments?sent=1&skipped=1")
		if n := links(); n != 1 {
			t.Fatalf("%d payment links queued, want 1", n)
		}
		audit := env.auditRows("registration.resend_payment_link")
		if len(audit) != 1 || audit[0].TargetID != reg {
			t.Fatalf("audit: %+v", audit)
		}
		if p := env.get(tr, "/staff/open-payments?sent=1&skipped=1"); !strings.Contains(p.testid("staff-flash").Text(), "1") {
			t.Errorf("flash %q", p.testid("staff-flash").Text())
		}

		// Paid meanwhile: skipped, nothing sent.
		setOrderStatus(t, db, order.ID, engine.OrderPaid)
		res = env.post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg}}, "Origin", env.srv.URL)
		expectRedirect(t, res, "/staff/open-payments?sent=0&skipped=1")
		if links() != 1 || len(env.auditRows("registration.resend_payment_link")) != 1 {
			t.Fatal("a paid order got the payment link")
		}
	})
}
