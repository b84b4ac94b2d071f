package handlers_test

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
)

// TestStaffAuditReadable: each entry reads "who did what to which
// record, when" in the page's language: the actor's name and e-mail, the
// action in words (its code only as data-action), the record named and
// linked, the change as field: before → after without raw JSON; the GET
// filters by actor, action, record and dates narrow the entries and keep
// to their filter when paging.
func TestStaffAuditReadable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		ctx := context.Background()
		order, _ := env.unpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		treasurer := env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		admin := env.addStaff("admin@example.org", staff.RoleAdmin)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		expectRedirect(t, env.post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}, "note": {"statement 7"}}, "Origin", env.srv.URL), "/staff/registrations/"+reg+"?done=captured-partial")
		if err := staff.Of(env.svc).ChangeStaffRole(ctx, engine.Actor{StaffID: &admin.ID, Name: "admin@example.org"}, 1, treasurer.ID, staff.RoleAdmin); err != nil {
			t.Fatal(err)
		}

		p := env.get(tr, "/staff/audit")
		rows := p.testid("audit-row")
		if p.status != http.StatusOK || rows.Length() < 4 {
			t.Fatalf("audit page: %d, %d rows", p.status, rows.Length())
		}
		entry := func(p page, action string) *goquery.Selection {
			return p.doc.Find(`[data-testid="audit-row"][data-action="` + action + `"]`).First()
		}
		capture := entry(p, "payment.capture")
		if got := capture.Find(`[data-testid="audit-action"]`).Text(); got != "recorded a payment received" {
			t.Errorf("capture in words: %q", got)
		}
		if who := squash(capture.Find("p").First().Text()); !strings.Contains(who, "Staff treasurer (treasurer@example.org) recorded a payment received") || !strings.HasSuffix(who, "Registration "+reg) {
			t.Errorf("actor: %q", who)
		}
		if a := capture.Find(`a[data-testid="audit-target"]`); a.AttrOr("href", "") != "/staff/registrations/"+reg || a.Text() != "Registration "+reg {
			t.Errorf("capture's record: %q → %q", a.Text(), a.AttrOr("href", ""))
		}
		if ch := spacedText(capture.Find(`[data-testid="audit-change"]`)); !strings.Contains(ch, "Amount") || !strings.Contains(ch, "EUR 1.00") ||
			!strings.Contains(ch, "Note") || !strings.Contains(ch, "statement 7") || !strings.Contains(ch, "Order status") || !strings.Contains(ch, "Unpaid") {
			t.Errorf("capture's change: %q", ch)
		}
		role := entry(p, "staff.role")
		if ch := squash(role.Find(`[data-testid="audit-change-value"]`).Text()); !strings.Contains(ch, "Treasurer → Administrator") {
			t.Errorf("role change: %q", ch)
		}
		if a := role.Find(`a[data-testid="audit-target"]`); !strings.Contains(a.Text(), "treasurer@example.org") || a.AttrOr("href", "") != "/staff/setup/staff" {
			t.Errorf("role change's record: %q → %q", a.Text(), a.AttrOr("href", ""))
		}
		if who := squash(role.Find(`[data-testid="audit-who"]`).Text()); who != "Staff admin (admin@example.org)" {
			t.Errorf("role change by %q", who)
		}
		if who := squash(entry(p, "staff.add").Find(`[data-testid="audit-who"]`).Text()); who != "Command line" {
			t.Errorf("staff added by %q", who)
		}
		text := p.testid("audit-table").Text()
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
			p := env.get(tr, "/staff/audit?"+c.query)
			var got []string
			p.testid("audit-row").Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-action", "")) })
			if p.status != http.StatusOK || len(got) != c.want || strings.Join(got, ",") != c.actions {
				t.Errorf("?%s: %d %v, want %s", c.query, p.status, got, c.actions)
			}
			if c.want == 0 && p.testid("audit-empty").Text() != "No entries match the filter." {
				t.Errorf("?%s: no empty message", c.query)
			}
		}
		if f := env.get(tr, "/staff/audit?action=staff.role").testid("audit-filter"); f.Find(`select[name="action"] option[selected]`).Text() != "changed a staff member's role" ||
			f.Find(`select[name="actor"] option[value="admin@example.org"]`).Text() != "Staff admin (admin@example.org)" {
			t.Errorf("filter form: %s", f.Text())
		}
		if p := env.get(tr, "/staff/audit?from=yesterday"); p.status != http.StatusBadRequest {
			t.Errorf("a date that does not parse: %d", p.status)
		}

		// Paging keeps the filter.
		for i := range 52 {
			env.addStaff("member"+strconv.Itoa(i)+"@example.org", staff.RoleViewer)
		}
		page1 := env.get(tr, "/staff/audit?action=staff.add")
		older := page1.testid("audit-older").AttrOr("href", "")
		if page1.testid("audit-row").Length() != 50 || !strings.Contains(older, "action=staff.add") || !strings.Contains(older, "before=") {
			t.Fatalf("first page: %d rows, older %q", page1.testid("audit-row").Length(), older)
		}
		page2 := env.get(tr, older)
		if n := page2.doc.Find(`[data-testid="audit-row"][data-action="staff.add"]`).Length(); n != 4 || page2.testid("audit-row").Length() != 4 ||
			page2.testid("audit-newest").AttrOr("href", "") != "/staff/audit?action=staff.add" {
			t.Errorf("second page: %d rows", n)
		}

		// In German.
		expectRedirect(t, env.get(tr, "/staff/audit?lang=de"), "/staff/audit")
		de := env.get(tr, "/staff/audit?record=registration")
		if de.status != http.StatusOK {
			t.Fatalf("German page: %d %s", de.status, de.body)
		}
		capture = entry(de, "payment.capture")
		if got := capture.Find(`[data-testid="audit-action"]`).Text(); got != "hat einen Zahlungseingang erfasst" {
			t.Errorf("German action: %q", got)
		}
		if a := capture.Find(`a[data-testid="audit-target"]`).Text(); a != "Anmeldung "+reg {
			t.Errorf("German record: %q", a)
		}
		if ch := spacedText(capture.Find(`[data-testid="audit-change"]`)); !strings.Contains(ch, "Betrag") || !strings.Contains(ch, "Bestellstatus") || !strings.Contains(ch, "unbezahlt") {
			t.Errorf("German change: %q", ch)
		}
		if ch := squash(entry(env.get(tr, "/staff/audit?action=staff.role"), "staff.role").Find(`[data-testid="audit-change-value"]`).Text()); !strings.Contains(ch, "Kasse →") {
			t.Errorf("German role change: %q", ch)
		}
		if when, now := capture.Find(`[data-testid="audit-when"]`).Text(), clock.Now().UTC(); !strings.HasPrefix(when, now.Format("2.")+" ") || !strings.Contains(when, now.Format("2006")) {
			t.Errorf("German date: %q", when)
		}
	})
}

// squash is s with its runs of white space as one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestStaffAuditPaymentsInWords: the entries of captures say everything
// in words, on the audit page and on the registration's page: a part
// captured by hand without a note, the rest from an imported statement
// (the order's status "Unpaid → Paid"), and a second payment from the
// same statement; no event or outcome code, no stored status, no order
// number, no empty note.
func TestStaffAuditPaymentsInWords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := newStaffBankEnv(t, db, true)
		order, rf := env.unpaidDemoOrder()
		reg := strconv.FormatInt(order.ProcessInstanceID, 10)
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.mustStaffSignIn("treasurer@example.org", "/staff")
		expectRedirect(t, env.post(tr, "/staff/registrations/"+reg+"/capture", url.Values{"amount": {"1.00"},
			"booked": {clock.Now().UTC().Format(time.DateOnly)}}, "Origin", env.srv.URL), "/staff/registrations/"+reg+"?done=captured-partial")
		rest := engine.FormatAmount(order.TotalMinor - 100)
		prev := env.postFile(tr, "/staff/payments/statement", nil, "camt054.xml", camt054(string(staffCreditor.IBAN),
			camtCredit{id: "C-1", amount: rest, ref: string(rf), debtor: "Demo Household"},
			camtCredit{id: "C-2", amount: "5.00", ref: string(rf), debtor: "Demo Household"}))
		copyOf := prev.doc.Find(`input[name="statement"]`).AttrOr("value", "")
		if done := env.postFile(tr, "/staff/payments/statement", map[string]string{"statement": copyOf, "capture": "1"}, "", nil); done.status != http.StatusOK {
			t.Fatalf("capture: %d %s", done.status, done.testid("staff-main").Text())
		}
		if got := env.orderStatus(order.ID); got != engine.OrderPaid {
			t.Fatalf("order after the statement: %s", got)
		}
		for _, path := range []string{"/staff/audit?action=payment.capture", "/staff/registrations/" + reg} {
			p := env.get(tr, path)
			rows := p.doc.Find(`[data-testid="audit-row"][data-action="payment.capture"]`)
			if p.status != http.StatusOK || rows.Length() != 3 {
				t.Fatalf("%s: %d, %d captures", path, p.status, rows.Length())
			}
			var changes []string
			rows.Each(func(_ int, s *goquery.Selection) {
				changes = append(changes, squash(spacedText(s.Find(`[data-testid="audit-change"]`))))
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
