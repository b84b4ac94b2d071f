package staff_test

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
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffRegistrationsList: each row names only the persons of its
// registration (not every person its user key may register), says what
// is still owed and for how many days, sorts by both columns either way,
// and links its household to the registration; money and dates follow
// the page's language.
func TestStaffRegistrationsList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		other := handlertest.SecondUnpaidRegistration(t, db, order)
		demoID := strconv.FormatInt(order.ProcessInstanceID, 10)
		otherID := strconv.FormatInt(other, 10)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")

		ids := func(query string) []string {
			t.Helper()
			p := env.Get(tr, "/staff/registrations"+query)
			if p.Status != http.StatusOK {
				t.Fatalf("%s: %d", query, p.Status)
			}
			var out []string
			p.TestID("registration-number").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
			return out
		}
		list := env.Get(tr, "/staff/registrations")
		rows := list.TestID("registration-row")
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
		sorted := env.Get(tr, "/staff/registrations?sort=owed")
		if th := sorted.TestID("sort-owed"); th.AttrOr("aria-sort", "") != "descending" || th.Find("a").AttrOr("href", "") != "/staff/registrations?sort=owed-asc" {
			t.Errorf("owed header when sorted by it: aria-sort %q, link %q", th.AttrOr("aria-sort", ""), th.Find("a").AttrOr("href", ""))
		}
		if th := sorted.TestID("sort-days"); th.AttrOr("aria-sort", "") != "none" || th.Find("a").AttrOr("href", "") != "/staff/registrations?sort=unpaid" {
			t.Errorf("days header: aria-sort %q, link %q", th.AttrOr("aria-sort", ""), th.Find("a").AttrOr("href", ""))
		}
		if v := sorted.Doc.Find(`[data-testid=registrations-filter] input[name=sort]`).AttrOr("value", ""); v != "owed" {
			t.Errorf("the filter form drops the order: %q", v)
		}
		if p := env.Get(tr, "/staff/registrations?sort=nonsense"); p.Status != http.StatusBadRequest {
			t.Errorf("unknown sort: %d", p.Status)
		}

		// A part arrived: the rest is owed.
		handlertest.ExpectRedirect(t, env.Post(tr, "/staff/registrations/"+demoID+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.Server.URL), "/staff/registrations/"+demoID+"?done=captured-partial")
		if got := env.Get(tr, "/staff/registrations?sort=owed").TestID("registration-owed").First().Text(); got != "EUR "+engine.FormatAmount(order.TotalMinor-100) {
			t.Errorf("owed after a part %q", got)
		}

		// In German: money and dates as the member pages write them.
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff/registrations?lang=de"), "/staff/registrations")
		de := env.Get(tr, "/staff/registrations")
		if got := de.TestID("registration-owed").First().Text(); got != "10,00\u00a0EUR" {
			t.Errorf("German owed %q", got)
		}
		month := []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}[clock.Now().UTC().Month()-1]
		if got := de.TestID("registration-row").First().Find("td").Last().Text(); !strings.Contains(got, month) {
			t.Errorf("German date %q, want the month %s", got, month)
		}
	})
}

// TestStaffOverviewFigures: the overview says which members are active
// and which await payment, gives the chart a scale and lists the busy
// days, and leads a treasurer from "awaiting payment" to who owes what.
func TestStaffOverviewFigures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		ov := env.Get(tr, "/staff")
		total := ov.TestID("overview-member-total")
		if a, p := total.Find(`[data-testid=members-active]`).Text(), total.Find(`[data-testid=members-pending]`).Text(); a != "1" || p != "2" {
			// Jamie's membership is paid (the seed); Alex's and Robin's wait.
			t.Errorf("members: %s active, %s awaiting payment; want 1 and 2", a, p)
		}
		if ov.TestID("overview-member").Length() != 2 || ov.TestID("overview-age").Length() != len(staff.AgeGroups) {
			t.Errorf("%d type rows, %d age rows", ov.TestID("overview-member").Length(), ov.TestID("overview-age").Length())
		}
		if got := ov.TestID("overview-chart-scale").Text(); got != "Scale: 0 to 1 a day" {
			t.Errorf("scale %q", got)
		}
		days := ov.TestID("overview-day")
		if days.Length() != 1 || days.Find(`[data-testid=overview-day-registrations]`).Text() != "1" ||
			!strings.Contains(days.Find("th").Text(), clock.Now().UTC().Format("2 January 2006")) {
			t.Errorf("busy days: %s", days.Text())
		}
		if href := ov.TestID("overview-open-payments").Find("a").AttrOr("href", ""); !strings.HasPrefix(href, "/staff/open-payments?period=") {
			t.Errorf("open payments link %q", href)
		}
		if ov.TestID("overview-open-payments").Text() != staffview.ListText.AwaitingLink {
			t.Errorf("open payments link text %q", ov.TestID("overview-open-payments").Text())
		}
		// The compact menu names the current page.
		if got := strings.TrimSpace(ov.TestID("staff-nav-toggle").Text()); !strings.Contains(got, "Menu: Overview") {
			t.Errorf("menu %q", got)
		}
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff")
		if p := env.Get(viewer, "/staff"); p.TestID("overview-open-payments").Length() != 0 {
			t.Error("a viewer is led to the open payments")
		}
		if ov.TestID("overview-books").Length() != 0 {
			t.Error("sound books, yet the overview shows the books check")
		}
		// Last night's books check found an order marked paid by hand:
		// the treasurer reads it in words, a viewer does not.
		if _, err := db.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderPaid).Where("1 = 1").Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := books.CheckAll(t.Context(), env.Engine, clock.Now()); err != nil {
			t.Fatal(err)
		}
		ov = env.Get(tr, "/staff")
		if got := ov.TestID("overview-books").Text(); !strings.Contains(got, "rules broken: 2") ||
			!strings.Contains(ov.TestID("overview-books-findings").Text(), "none of its payments succeeded") {
			t.Errorf("the books check on the overview: %q / %q", got, ov.TestID("overview-books-findings").Text())
		}
		if p := env.Get(viewer, "/staff"); p.TestID("overview-books").Length() != 0 {
			t.Error("a viewer sees the books check")
		}
	})
}
