package registrations_test

import (
	"context"
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
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// TestStaffAuditReadable: each entry reads "who did what to which
// record, when" in the page's language: the actor's name and e-mail, the
// action in words (its code only as data-action), the record named and
// linked, the change as field: before → after without raw JSON; the GET
// filters by actor, action, record and dates narrow the entries and keep
// to their filter when paging.
func TestStaffAuditReadable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, _ := env.UnpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		treasurer := env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		admin := env.AddStaff("admin@example.org", staff.RoleAdmin)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		handlertest.ExpectRedirect(t, env.Post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}, "note": {"statement 7"}}, "Origin", env.Server.URL), "/staff/registrations/"+reg+"?done=captured-partial")
		if err := staff.Of(env.Engine).ChangeStaffRole(ctx, engine.Actor{StaffID: &admin.ID, Name: "admin@example.org"}, 1, treasurer.ID, staff.RoleAdmin); err != nil {
			t.Fatal(err)
		}

		p := env.Get(tr, "/staff/audit")
		rows := p.TestID("audit-row")
		if p.Status != http.StatusOK || rows.Length() < 4 {
			t.Fatalf("audit page: %d, %d rows", p.Status, rows.Length())
		}
		entry := func(p handlertest.Page, action string) *goquery.Selection {
			return p.Doc.Find(`[data-testid="audit-row"][data-action="` + action + `"]`).First()
		}
		capture := entry(p, "payment.capture")
		if got := capture.Find(`[data-testid="audit-action"]`).Text(); got != "recorded a payment received" {
			t.Errorf("capture in words: %q", got)
		}
		if who := handlertest.Squash(capture.Find("p").First().Text()); !strings.Contains(who, "Staff treasurer (treasurer@example.org) recorded a payment received") || !strings.HasSuffix(who, "Registration "+reg) {
			t.Errorf("actor: %q", who)
		}
		if a := capture.Find(`a[data-testid="audit-target"]`); a.AttrOr("href", "") != "/staff/registrations/"+reg || a.Text() != "Registration "+reg {
			t.Errorf("capture's record: %q → %q", a.Text(), a.AttrOr("href", ""))
		}
		if ch := handlertest.SpacedText(capture.Find(`[data-testid="audit-change"]`)); !strings.Contains(ch, "Amount") || !strings.Contains(ch, "EUR 1.00") ||
			!strings.Contains(ch, "Note") || !strings.Contains(ch, "statement 7") || !strings.Contains(ch, "Order status") || !strings.Contains(ch, "Unpaid") {
			t.Errorf("capture's change: %q", ch)
		}
		role := entry(p, "staff.role")
		if ch := handlertest.Squash(role.Find(`[data-testid="audit-change-value"]`).Text()); !strings.Contains(ch, "Treasurer → Administrator") {
			t.Errorf("role change: %q", ch)
		}
		if a := role.Find(`a[data-testid="audit-target"]`); !strings.Contains(a.Text(), "treasurer@example.org") || a.AttrOr("href", "") != "/staff/setup/staff" {
			t.Errorf("role change's record: %q → %q", a.Text(), a.AttrOr("href", ""))
		}
		if who := handlertest.Squash(role.Find(`[data-testid="audit-who"]`).Text()); who != "Staff admin (admin@example.org)" {
			t.Errorf("role change by %q", who)
		}
		if who := handlertest.Squash(entry(p, "staff.add").Find(`[data-testid="audit-who"]`).Text()); who != "Command line" {
			t.Errorf("staff added by %q", who)
		}
		text := p.TestID("audit-table").Text()
		for _, raw := range []string{"{", "payment.capture", "staff 4", "staff.role"} {
			if strings.Contains(text, raw) {
				t.Errorf("the log shows %q:\n%s", raw, text)
			}
		}

		// Filters narrow, and say so when nothing matches.
		today := clock.Now().UTC().Format(time.DateOnly)
		tomorrow := clock.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
		yesterday := clock.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		for _, c := range []struct {
			query   string
			want    int
			actions string
		}{
			{"action=payment.capture", 1, "payment.capture"},
			{"actor=admin%40example.org", 1, "staff.role"},
			{"record=registration&record_id=" + reg, 1, "payment.capture"},
			{"record=staff&record_id=" + strconv.FormatInt(treasurer.ID, 10), 3, "staff.role,staff.bind,staff.add"},
			{"actor=command+line&action=staff.add", 2, "staff.add,staff.add"},
			{"from=" + today + "&until=" + today + "&action=staff.role", 1, "staff.role"},
			{"from=" + tomorrow, 0, ""},
			{"until=" + yesterday, 0, ""},
		} {
			p := env.Get(tr, "/staff/audit?"+c.query)
			var got []string
			p.TestID("audit-row").Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-action", "")) })
			if p.Status != http.StatusOK || len(got) != c.want || strings.Join(got, ",") != c.actions {
				t.Errorf("?%s: %d %v, want %s", c.query, p.Status, got, c.actions)
			}
			if c.want == 0 && p.TestID("audit-empty").Text() != "No entries match the filter." {
				t.Errorf("?%s: no empty message", c.query)
			}
		}
		if f := env.Get(tr, "/staff/audit?action=staff.role").TestID("audit-filter"); f.Find(`select[name="action"] option[selected]`).Text() != "changed a staff member's role" ||
			f.Find(`select[name="actor"] option[value="admin@example.org"]`).Text() != "Staff admin (admin@example.org)" {
			t.Errorf("filter form: %s", f.Text())
		}
		if p := env.Get(tr, "/staff/audit?from=yesterday"); p.Status != http.StatusBadRequest {
			t.Errorf("a date that does not parse: %d", p.Status)
		}

		// Paging keeps the filter.
		for i := range 52 {
			env.AddStaff("member"+strconv.Itoa(i)+"@example.org", staff.RoleViewer)
		}
		page1 := env.Get(tr, "/staff/audit?action=staff.add")
		older := page1.TestID("audit-older").AttrOr("href", "")
		if page1.TestID("audit-row").Length() != 50 || !strings.Contains(older, "action=staff.add") || !strings.Contains(older, "before=") {
			t.Fatalf("first page: %d rows, older %q", page1.TestID("audit-row").Length(), older)
		}
		page2 := env.Get(tr, older)
		if n := page2.Doc.Find(`[data-testid="audit-row"][data-action="staff.add"]`).Length(); n != 4 || page2.TestID("audit-row").Length() != 4 ||
			page2.TestID("audit-newest").AttrOr("href", "") != "/staff/audit?action=staff.add" {
			t.Errorf("second page: %d rows", n)
		}

		// In German.
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff/audit?lang=de"), "/staff/audit")
		de := env.Get(tr, "/staff/audit?record=registration")
		if de.Status != http.StatusOK {
			t.Fatalf("German page: %d %s", de.Status, de.Body)
		}
		capture = entry(de, "payment.capture")
		if got := capture.Find(`[data-testid="audit-action"]`).Text(); got != "hat einen Zahlungseingang erfasst" {
			t.Errorf("German action: %q", got)
		}
		if a := capture.Find(`a[data-testid="audit-target"]`).Text(); a != "Anmeldung "+reg {
			t.Errorf("German record: %q", a)
		}
		if ch := handlertest.SpacedText(capture.Find(`[data-testid="audit-change"]`)); !strings.Contains(ch, "Betrag") || !strings.Contains(ch, "Bestellstatus") || !strings.Contains(ch, "unbezahlt") {
			t.Errorf("German change: %q", ch)
		}
		if ch := handlertest.Squash(entry(env.Get(tr, "/staff/audit?action=staff.role"), "staff.role").Find(`[data-testid="audit-change-value"]`).Text()); !strings.Contains(ch, "Kasse →") {
			t.Errorf("German role change: %q", ch)
		}
		if when, now := capture.Find(`[data-testid="audit-when"]`).Text(), clock.Now().UTC(); !strings.HasPrefix(when, now.Format("2.")+" ") || !strings.Contains(when, now.Format("2006")) {
			t.Errorf("German date: %q", when)
		}
	})
}

// TestStaffAuditPaymentsInWords: the entries of captures say everything
// in words, on the audit page and on the registration's page: a part
// captured by hand without a note, the rest from an imported statement
// (the order's status "Unpaid → Paid"), and a second payment from the
// same statement; no event or outcome code, no stored status, no order
// number, no empty note.
func TestStaffAuditPaymentsInWords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, rf := env.UnpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		handlertest.ExpectRedirect(t, env.Post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.Server.URL), "/staff/registrations/"+reg+"?done=captured-partial")
		rest := engine.FormatAmount(order.TotalMinor - 100)
		prev := env.PostFile(tr, "/staff/payments/statement", nil, "camt054.xml", handlertest.Camt054(string(handlertest.StaffCreditor.IBAN),
			handlertest.CamtCredit{Id: "C-1", Amount: rest, Ref: string(rf), Debtor: "Demo Household"},
			handlertest.CamtCredit{Id: "C-2", Amount: "5.00", Ref: string(rf), Debtor: "Demo Household"}))
		copyOf := prev.Doc.Find(`input[name="statement"]`).AttrOr("value", "")
		if done := env.PostFile(tr, "/staff/payments/statement", map[string]string{"statement": copyOf, "capture": "1"}, "", nil); done.Status != http.StatusOK {
			t.Fatalf("capture: %d %s", done.Status, done.TestID("staff-main").Text())
		}
		if got := env.OrderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("order after the statement: %s", got)
		}
		for _, path := range []string{"/staff/audit?action=payment.capture", "/staff/registrations/" + reg} {
			p := env.Get(tr, path)
			rows := p.Doc.Find(`[data-testid="audit-row"][data-action="payment.capture"]`)
			if p.Status != http.StatusOK || rows.Length() != 3 {
				t.Fatalf("%s: %d, %d captures", path, p.Status, rows.Length())
			}
			var changes []string
			rows.Each(func(_ int, s *goquery.Selection) {
				changes = append(changes, handlertest.Squash(handlertest.SpacedText(s.Find(`[data-testid="audit-change"]`))))
			})
			all := strings.Join(changes, "\n")
			for _, raw := range []string{"bank_transfer.capture", "second_credit", "success", "PENDING", "SUCCEEDED",
				"Order " + strconv.FormatInt(order.ID, 10), "(empty)"} {
				if strings.Contains(all, raw) {
					t.Errorf("%s shows %q:\n%s", path, raw, all)
				}
			}
			for _, want := range []string{"Order status Unpaid → Paid", "Payment status Pending → Succeeded", "bank transfer received",
				"second payment, to be paid back", "paid in full"} {
				if !strings.Contains(all, want) {
					t.Errorf("%s does not say %q:\n%s", path, want, all)
				}
			}
			// The part captured by hand, without a note, says what the
			// order is after it: still unpaid.
			if hand := changes[len(changes)-1]; hand != "Amount EUR 1.00 Booked "+clock.Now().UTC().Format(time.DateOnly)+" Order status Unpaid" {
				t.Errorf("%s: the capture by hand: %q", path, hand)
			}
		}
	})
}
