package payments_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// The treasurer's open payments: an unpaid order with what is still owed
// after a part arrived, its RF reference, days since commit, reminders
// and the last message; not once paid or cancelled, nor another club's;
// the same rows as CSV with formulas neutralised; for treasurers only.
func TestStaffOpenPaymentsList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, rf := env.UnpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")

		// A part arrived; the order was committed ten days ago and
		// reminded since.
		handlertest.ExpectRedirect(t, env.Post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.Server.URL), "/staff/registrations/"+reg+"?done=captured-partial")
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

		p := env.Get(tr, "/staff/open-payments")
		rows := p.TestID("open-payment-row")
		if p.Status != http.StatusOK || rows.Length() != 1 || rows.AttrOr("data-registration", "") != reg {
			t.Fatalf("list: %d, %d rows: %s", p.Status, rows.Length(), p.TestID("staff-main").Text())
		}
		owed := engine.FormatAmount(order.TotalMinor - 100)
		if got := p.TestID("open-payment-owed").Text(); !strings.Contains(strings.ReplaceAll(got, "\u00a0", " "), owed) {
			t.Errorf("owed %q, want %s", got, owed)
		}
		if got := p.TestID("open-payment-rf").Text(); got != rf.String() {
			t.Errorf("RF %q, want %q", got, rf.String())
		}
		if got := p.TestID("open-payment-days").Text(); got != "10" {
			t.Errorf("days %q, want 10", got)
		}
		if got := p.TestID("open-payment-reminders").Text(); got != "1" {
			t.Errorf("reminders %q, want 1", got)
		}
		if got := p.TestID("open-payment-last-message").Text(); !strings.Contains(got, staffview.RegistrationText.MsgReminder) {
			t.Errorf("last message %q", got)
		}
		// Filters: unpaid for more than 10 days keeps it, 11 does not;
		// reminded at least twice does not.
		for q, want := range map[string]int{"unpaid=10": 1, "unpaid=11": 0, "reminders=1&sort=owed": 1, "reminders=2": 0} {
			if n := env.Get(tr, "/staff/open-payments?"+q).TestID("open-payment-row").Length(); n != want {
				t.Errorf("?%s: %d rows, want %d", q, n, want)
			}
		}
		if p := env.Get(tr, "/staff/open-payments?sort=nonsense"); p.Status != http.StatusBadRequest {
			t.Errorf("unknown sort: %d", p.Status)
		}
		// One page: no page links; a page past the last shows the last; a
		// page that is not a number is refused.
		if p := env.Get(tr, "/staff/open-payments?page=3"); p.TestID("open-payment-row").Length() != 1 ||
			p.TestID("open-payments-next").Length()+p.TestID("open-payments-prev").Length() != 0 {
			t.Errorf("page past the last: %d rows, links %d/%d", p.TestID("open-payment-row").Length(),
				p.TestID("open-payments-prev").Length(), p.TestID("open-payments-next").Length())
		}
		for _, bad := range []string{"0", "x", "-1"} {
			if p := env.Get(tr, "/staff/open-payments?page="+bad); p.Status != http.StatusBadRequest {
				t.Errorf("page=%s: %d", bad, p.Status)
			}
		}

		// The CSV has the same row, the formula neutralised.
		res := env.Get(tr, "/staff/open-payments.csv")
		recs, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
		if err != nil || res.Status != http.StatusOK || len(recs) != 2 {
			t.Fatalf("csv: %d %v %q", res.Status, err, res.Body)
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
		ov := env.Get(tr, "/staff")
		if href := ov.Doc.Find(`[data-state="awaiting_payment"] a`).AttrOr("href", ""); !strings.HasPrefix(href, "/staff/open-payments?period=") {
			t.Errorf("overview links awaiting payment to %q", href)
		}

		// Viewers and registrars may not see who owes what.
		for _, r := range []staff.StaffRole{staff.RoleViewer, staff.RoleRegistrar} {
			env.AddStaff(string(r)+"@example.org", r)
			c := env.MustStaffSignIn(string(r)+"@example.org", "/staff")
			for _, path := range []string{"/staff/open-payments", "/staff/open-payments.csv"} {
				if p := env.Get(c, path); p.Status != http.StatusForbidden {
					t.Errorf("%s %s: %d", r, path, p.Status)
				}
			}
		}

		// Paid or cancelled: gone from the list.
		for _, st := range []engine.OrderStatus{engine.OrderPaid, engine.OrderCancelled} {
			setOrderStatus(t, db, order.ID, st)
			if n := env.Get(tr, "/staff/open-payments").TestID("open-payment-row").Length(); n != 0 {
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
		if n := env.Get(tr, "/staff/open-payments").TestID("open-payment-row").Length(); n != 0 {
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
// TestStaffOpenPaymentsPages: a season of some 115 unpaid orders is
// listed 100 a page, with the filters kept from page to page; the count
// names every order; the CSV has them all.
func TestStaffOpenPaymentsPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		enginetest.SeedSeason(t, db, 700)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		all, err := staff.Of(env.Engine).OpenPayments(t.Context(), staff.OpenPaymentQuery{OrganisationID: 1, Sort: staff.SortNewest})
		if err != nil || len(all) <= 100 || len(all) > 200 {
			t.Fatalf("%d open payments, %v: want two pages", len(all), err)
		}
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		first := env.Get(tr, "/staff/open-payments?sort=newest")
		next := first.TestID("open-payments-next").AttrOr("href", "")
		if n := first.TestID("open-payment-row").Length(); n != 100 || first.TestID("open-payments-prev").Length() != 0 || !strings.Contains(next, "sort=newest") {
			t.Fatalf("first page: %d rows, next %q", n, next)
		}
		if got := first.TestID("open-payments-count").Text(); !strings.Contains(got, strconv.Itoa(len(all))) {
			t.Errorf("count %q, want %d", got, len(all))
		}
		second := env.Get(tr, next)
		var ids []string
		for _, p := range []handlertest.Page{first, second} {
			p.TestID("open-payment-row").Each(func(_ int, r *goquery.Selection) { ids = append(ids, r.AttrOr("data-registration", "")) })
		}
		if second.TestID("open-payments-next").Length() != 0 || second.TestID("open-payments-prev").Length() != 1 || len(ids) != len(all) {
			t.Fatalf("second page: %d rows in all, links %d/%d", len(ids), second.TestID("open-payments-prev").Length(), second.TestID("open-payments-next").Length())
		}
		for i, r := range all {
			if ids[i] != strconv.FormatInt(r.RegistrationID, 10) {
				t.Fatalf("row %d: registration %s, want %d", i, ids[i], r.RegistrationID)
			}
		}
		res := env.Get(tr, "/staff/open-payments.csv")
		if recs, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll(); err != nil || len(recs) != len(all)+1 {
			t.Errorf("csv: %d records, %v", len(recs), err)
		}
	})
}

func TestStaffOpenPaymentsResendLinks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		links := func() int {
			return env.Count((*engine.OutboxMessage)(nil), "kind = ? AND dedup_key LIKE ?", payment.KindPaymentLink,
				string(payment.KindPaymentLink)+":order:"+strconv.FormatInt(order.ID, 10)+":resend:%")
		}

		cross := env.Post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg}},
			"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		if cross.Status != http.StatusForbidden || links() != 0 {
			t.Fatalf("cross-site: %d, %d links", cross.Status, links())
		}
		if p := env.Post(tr, "/staff/open-payments/resend-payment-link", url.Values{}, "Origin", env.Server.URL); p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("nothing selected: %d", p.Status)
		}

		// Named twice, and an unknown registration.
		res := env.Post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg, reg, "999999"}}, "Origin", env.Server.URL)
		handlertest.ExpectRedirect(t, res, "/staff/open-payments?sent=1&skipped=1")
		if n := links(); n != 1 {
			t.Fatalf("%d payment links queued, want 1", n)
		}
		audit := env.AuditRows("registration.resend_payment_link")
		if len(audit) != 1 || audit[0].TargetID != reg {
			t.Fatalf("audit: %+v", audit)
		}
		if p := env.Get(tr, "/staff/open-payments?sent=1&skipped=1"); !strings.Contains(p.TestID("staff-flash").Text(), "1") {
			t.Errorf("flash %q", p.TestID("staff-flash").Text())
		}

		// Paid meanwhile: skipped, nothing sent.
		setOrderStatus(t, db, order.ID, engine.OrderPaid)
		res = env.Post(tr, "/staff/open-payments/resend-payment-link", url.Values{"id": {reg}}, "Origin", env.Server.URL)
		handlertest.ExpectRedirect(t, res, "/staff/open-payments?sent=0&skipped=1")
		if links() != 1 || len(env.AuditRows("registration.resend_payment_link")) != 1 {
			t.Fatal("a paid order got the payment link")
		}
	})
}
