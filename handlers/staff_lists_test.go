package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/books"
	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/views/staffview"
)

// secondUnpaidRegistration adds, beside the demo household's, a
// registration of user key demo-1 for its first person with an unpaid
// order of 10.00 placed five days ago, and returns its id.
func secondUnpaidRegistration(t *testing.T, db *bun.DB, demo engine.Order) int64 {
	t.Helper()
	ctx := t.Context()
	var inst engine.ProcessInstance
	if err := db.NewSelect().Model(&inst).Where("id = ?", demo.ProcessInstanceID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var person int64
	if err := db.NewSelect().TableExpr("user_persons").ColumnExpr("MIN(person_id)").Where("user_key = ?", "demo-1").Scan(ctx, &person); err != nil {
		t.Fatal(err)
	}
	inst.ID, inst.UserKey, inst.SelectedPersons = 0, "demo-1", []int64{person}
	if _, err := db.NewInsert().Model(&inst).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	o := demo
	o.ID, o.ProcessInstanceID, o.UserKey, o.PayReference, o.TotalMinor = 0, inst.ID, "demo-1", demo.PayReference+"X", 1000
	o.CreatedAt = clock.Now().UTC().Add(-5*24*time.Hour - time.Hour)
	o.Lines = nil
	if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return inst.ID
}

// TestStaffRegistrationsList: each row names only the persons of its
// registration (not every person its user key may register), says what
// is still owed and for how many days, sorts by both columns either way,
// and links its household to the registration; money and dates follow
// the page's language.
func TestStaffRegistrationsList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, _ := env.unpaidDemoOrder()
		other := secondUnpaidRegistration(t, db, order)
		demoID := strconv.FormatInt(order.ProcessInstanceID, 10)
		otherID := strconv.FormatInt(other, 10)
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")

		ids := func(query string) []string {
			t.Helper()
			p := env.get(tr, "/staff/registrations"+query)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d", query, p.status)
			}
			var out []string
			p.testid("registration-number").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
			return out
		}
		list := env.get(tr, "/staff/registrations")
		rows := list.testid("registration-row")
		if rows.Length() != 2 {
			t.Fatalf("%d rows", rows.Length())
		}
		demoRow, otherRow := rows.Eq(1), rows.Eq(0)
		// The demo household has four persons; this registration is Alex's and Robin's.
		if got := demoRow.Find(`[data-testid=registration-household]`).Text(); got != "Alex Morgan, Robin Morgan" {
			t.Errorf("household of the demo registration %q, want only its persons", got)
		}
		if got := otherRow.Find(`[data-testid=registration-household]`).Text(); got != "Load Tester 1 A" {
			t.Errorf("household of demo-1's registration %q", got)
		}
		link := demoRow.Find(`[data-testid=registration-link]`)
		if link.AttrOr("href", "") != "/staff/registrations/"+demoID || !strings.Contains(link.Text(), "Alex Morgan") {
			t.Errorf("the household's link: %q to %q", link.Text(), link.AttrOr("href", ""))
		}
		if got := demoRow.Find(`[data-testid=registration-owed]`).Text(); got != "EUR "+engine.FormatAmount(order.TotalMinor) {
			t.Errorf("owed %q", got)
		}
		if got := otherRow.Find(`[data-testid=registration-owed]`).Text(); got != "EUR 10.00" {
			t.Errorf("owed of demo-1 %q", got)
		}
		if d, o := demoRow.Find(`[data-testid=registration-days]`).Text(), otherRow.Find(`[data-testid=registration-days]`).Text(); d != "0" || o != "5" {
			t.Errorf("days unpaid %q and %q, want 0 and 5", d, o)
		}

		// Sorted by either column, either way; paging and the filter keep the order.
		for _, tc := range []struct{ sort, first string }{
			{"", otherID}, {"?sort=owed", demoID}, {"?sort=owed-asc", otherID}, {"?sort=unpaid", otherID}, {"?sort=unpaid-asc", demoID},
		} {
			if got := ids(tc.sort); len(got) != 2 || got[0] != tc.first {
				t.Errorf("%q: %v, want %s first", tc.sort, got, tc.first)
			}
		}
		sorted := env.get(tr, "/staff/registrations?sort=owed")
		if th := sorted.testid("sort-owed"); th.AttrOr("aria-sort", "") != "descending" || th.Find("a").AttrOr("href", "") != "/staff/registrations?sort=owed-asc" {
			t.Errorf("owed header when sorted by it: aria-sort %q, link %q", th.AttrOr("aria-sort", ""), th.Find("a").AttrOr("href", ""))
		}
		if th := sorted.testid("sort-days"); th.AttrOr("aria-sort", "") != "none" || th.Find("a").AttrOr("href", "") != "/staff/registrations?sort=unpaid" {
			t.Errorf("days header: aria-sort %q, link %q", th.AttrOr("aria-sort", ""), th.Find("a").AttrOr("href", ""))
		}
		if v := sorted.doc.Find(`[data-testid=registrations-filter] input[name=sort]`).AttrOr("value", ""); v != "owed" {
			t.Errorf("the filter form drops the order: %q", v)
		}
		if p := env.get(tr, "/staff/registrations?sort=nonsense"); p.status != http.StatusBadRequest {
			t.Errorf("unknown sort: %d", p.status)
		}

		// A part arrived: the rest is owed.
		expectRedirect(t, env.post(tr, "/staff/registrations/"+demoID+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.srv.URL), "/staff/registrations/"+demoID+"?done=captured-partial")
		if got := env.get(tr, "/staff/registrations?sort=owed").testid("registration-owed").First().Text(); got != "EUR "+engine.FormatAmount(order.TotalMinor-100) {
			t.Errorf("owed after a part %q", got)
		}

		// In German: money and dates as the member pages write them.
		expectRedirect(t, env.get(tr, "/staff/registrations?lang=de"), "/staff/registrations")
		de := env.get(tr, "/staff/registrations")
		if got := de.testid("registration-owed").First().Text(); got != "10,00\u00a0EUR" {
			t.Errorf("German owed %q", got)
		}
		month := []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}[clock.Now().UTC().Month()-1]
		if got := de.testid("registration-row").First().Find("td").Last().Text(); !strings.Contains(got, month) {
			t.Errorf("German date %q, want the month %s", got, month)
		}
	})
}

// TestStaffOverviewFigures: the overview says which members are active
// and which await payment, gives the chart a scale and lists the busy
// days, and leads a treasurer from "awaiting payment" to who owes what.
func TestStaffOverviewFigures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		env.unpaidDemoOrder()
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		env.addStaff("viewer@example.org", staff.RoleViewer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		ov := env.get(tr, "/staff")
		total := ov.testid("overview-member-total")
		if a, p := total.Find(`[data-testid=members-active]`).Text(), total.Find(`[data-testid=members-pending]`).Text(); a != "1" || p != "2" {
			// Jamie's membership is paid (the seed); Alex's and Robin's wait.
			t.Errorf("members: %s active, %s awaiting payment; want 1 and 2", a, p)
		}
		if ov.testid("overview-member").Length() != 2 || ov.testid("overview-age").Length() != len(staff.AgeGroups) {
			t.Errorf("%d type rows, %d age rows", ov.testid("overview-member").Length(), ov.testid("overview-age").Length())
		}
		if got := ov.testid("overview-chart-scale").Text(); got != "Scale: 0 to 1 a day" {
			t.Errorf("scale %q", got)
		}
		days := ov.testid("overview-day")
		if days.Length() != 1 || days.Find(`[data-testid=overview-day-registrations]`).Text() != "1" ||
			!strings.Contains(days.Find("th").Text(), clock.Now().UTC().Format("2 January 2006")) {
			t.Errorf("busy days: %s", days.Text())
		}
		if href := ov.testid("overview-open-payments").Find("a").AttrOr("href", ""); !strings.HasPrefix(href, "/staff/open-payments?period=") {
			t.Errorf("open payments link %q", href)
		}
		if ov.testid("overview-open-payments").Text() != staffview.ListText.AwaitingLink {
			t.Errorf("open payments link text %q", ov.testid("overview-open-payments").Text())
		}
		// The compact menu names the current page.
		if got := strings.TrimSpace(ov.testid("staff-nav-toggle").Text()); !strings.Contains(got, "Menu: Overview") {
			t.Errorf("menu %q", got)
		}
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff")
		if p := env.get(viewer, "/staff"); p.testid("overview-open-payments").Length() != 0 {
			t.Error("a viewer is led to the open payments")
		}
		if ov.testid("overview-books").Length() != 0 {
			t.Error("sound books, yet the overview shows the books check")
		}
		// Last night's books check found an order marked paid by hand:
		// the treasurer reads it in words, a viewer does not.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Where("1 = 1").Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := books.CheckAll(t.Context(), env.svc, clock.Now()); err != nil {
			t.Fatal(err)
		}
		ov = env.get(tr, "/staff")
		if got := ov.testid("overview-books").Text(); !strings.Contains(got, "rules broken: 2") ||
			!strings.Contains(ov.testid("overview-books-findings").Text(), "none of its payments succeeded") {
			t.Errorf("the books check on the overview: %q / %q", got, ov.testid("overview-books-findings").Text())
		}
		if p := env.get(viewer, "/staff"); p.testid("overview-books").Length() != 0 {
			t.Error("a viewer sees the books check")
		}
	})
}
