package handlers_test

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/server"
	"portal/views/staffview"
)

// bankTransferStaffEnv is a staff environment whose members pay by bank transfer.
func bankTransferStaffEnv(t *testing.T, db *bun.DB) *staffEnv {
	t.Helper()
	creditor := banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: mustIBAN(t, "DE89370400440532013000"), BIC: "COBADEFFXXX"}
	var base string
	bt, err := banktransfer.New(creditor, func(ref string, amount int64) string { return server.PaymentLinks(base).PayLink("", ref, amount) })
	if err != nil {
		t.Fatal(err)
	}
	env := newStaffEnv(t, db, envOptions{provider: bt})
	base = env.srv.URL
	return env
}

// TestStaffRegistrationPages walks a treasurer through a registration
// paid by bank transfer: find it, read it, capture the transfer, resend
// the confirmation, cancel and refund; every change is in its audit trail.
func TestStaffRegistrationPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := bankTransferStaffEnv(t, db)
		env.completeDemo(env.newClient())
		env.addStaff("treasurer@example.org", staff.RoleTreasurer)
		env.addStaff("viewer@example.org", staff.RoleViewer)
		c := env.mustStaffSignIn("treasurer@example.org", "/staff/registrations")

		list := env.get(c, "/staff/registrations")
		if list.status != http.StatusOK || list.testid("registration-row").Length() != 1 {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		row := list.testid("registration-row")
		if got := row.Find(`[data-testid=state]`).AttrOr("data-state", ""); got != "awaiting_payment" {
			t.Errorf("state %q", got)
		}
		if got := row.Find(`[data-testid=registration-household]`).Text(); !strings.Contains(got, "Alex") || !strings.Contains(got, "Robin") {
			t.Errorf("household %q", got)
		}
		detailURL := row.Find(`[data-testid=registration-link]`).AttrOr("href", "")
		id, _ := strconv.ParseInt(strings.TrimPrefix(detailURL, "/staff/registrations/"), 10, 64)
		var order engine.Order
		if err := db.NewSelect().Model(&order).Where("process_instance_id = ?", id).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}

		// Search and filters, each with a hit and a miss.
		for _, tc := range []struct {
			query string
			rows  int
		}{
			{"q=robin", 1}, {"q=Alex+Adams", 0}, {"q=demo", 1}, {"q=" + order.PayReference, 1}, {"q=nobody", 0},
			{"state=awaiting_payment", 1}, {"state=paid", 0}, {"period=1", 1}, {"period=2", 0}, {"unpaid=0", 1}, {"unpaid=3", 0},
		} {
			p := env.get(c, "/staff/registrations?"+tc.query)
			if p.status != http.StatusOK || p.testid("registration-row").Length() != tc.rows {
				t.Errorf("%s: %d, %d rows, want %d", tc.query, p.status, p.testid("registration-row").Length(), tc.rows)
			}
		}
		for _, bad := range []string{"state=lost", "page=-1", "period=x"} {
			if p := env.get(c, "/staff/registrations?"+bad); p.status != http.StatusBadRequest || p.testid("staff-message-text").Text() == "" {
				t.Errorf("%s: %d", bad, p.status)
			}
		}

		// The CSV export, for treasurers, not viewers.
		exp := env.do(c, http.MethodGet, "/staff/registrations.csv?state=awaiting_payment", nil)
		recs, err := csv.NewReader(strings.NewReader(string(exp.body))).ReadAll()
		if exp.status != http.StatusOK || err != nil || len(recs) != 2 || recs[1][0] != strconv.FormatInt(id, 10) || recs[1][7] != order.PayReference {
			t.Fatalf("export: %d %v %q", exp.status, err, exp.body)
		}
		viewer := env.mustStaffSignIn("viewer@example.org", "/staff/registrations")
		if p := env.get(viewer, "/staff/registrations"); p.testid("registrations-csv").Length() != 0 {
			t.Error("a viewer is offered the export")
		}

		// The detail.
		d := env.get(c, detailURL)
		if d.status != http.StatusOK || d.testid("household-person").Length() != 2 ||
			d.testid("answer").Length() == 0 || d.testid("order-reference").Text() != order.PayReference || d.doc.Find(historyAttempts).Length() != 1 {
			t.Fatalf("detail: %d %s", d.status, d.body)
		}
		if d.testid("capture-form").Length() != 1 || d.testid("action-resend-link").Length() != 1 || d.testid("action-resend-confirmation").Length() != 0 {
			t.Fatalf("actions of an unpaid registration: %s", d.testid("detail-actions").Text())
		}
		if p := env.get(viewer, detailURL); p.testid("capture-form").Length() != 0 || p.testid("action-cancel").Length() != 0 {
			t.Fatal("a viewer is offered actions")
		}

		// Bad input changes nothing and says what is wrong.
		for _, form := range []url.Values{{"amount": {"abc"}, "booked": {"2026-01-02"}}, {"amount": {"10"}, "booked": {"tomorrow"}}, {"amount": {"-5"}, "booked": {"2026-01-02"}}} {
			p := env.post(c, detailURL+"/capture", form)
			if p.status != http.StatusUnprocessableEntity || p.testid("staff-message-text").Text() == "" {
				t.Errorf("capture %v: %d", form, p.status)
			}
		}
		if after := env.get(c, detailURL); after.doc.Find(historyPayments).Length() != 0 {
			t.Fatal("a refused capture recorded an event")
		}

		// The capture completes the registration and queues the confirmation.
		amount := engine.FormatMoney(order.TotalMinor, "")[1:]
		res := env.post(c, detailURL+"/capture", url.Values{"amount": {amount}, "booked": {"2026-01-02"}, "note": {"statement 7"}})
		expectRedirect(t, res, detailURL+"?done=captured")
		d = env.get(c, detailURL+"?done=captured")
		if d.testid("staff-flash").Text() == "" || d.testid("state").First().AttrOr("data-state", "") != "paid" || d.doc.Find(historyAttempts).Find(`[data-testid=history-status]`).Text() != staffview.OpsText.StatusSucceeded {
			t.Fatalf("after the capture: %s", d.body)
		}
		if got := d.doc.Find(historyMessages).Text(); !strings.Contains(got, staffview.RegistrationText.MsgConfirmation) {
			t.Fatalf("messages after the capture: %q", got)
		}
		// The form sent twice captures once.
		expectRedirect(t, env.post(c, detailURL+"/capture", url.Values{"amount": {amount}, "booked": {"2026-01-02"}, "note": {"statement 7"}}), detailURL+"?done=captured")
		if again := env.get(c, detailURL); again.doc.Find(historyAttempts).Length() != 1 || again.doc.Find(historyPayments).Length() != 1 {
			t.Fatalf("the capture sent twice: %d payments, %d events", again.doc.Find(historyAttempts).Length(), again.doc.Find(historyPayments).Length())
		}
		if got := d.testid("audit-row").First().AttrOr("data-action", ""); got != "payment.capture" || d.testid("audit-action").First().Text() != "recorded a payment received" {
			t.Fatalf("audit after the capture: %q %q", got, d.testid("audit-action").First().Text())
		}
		if !strings.Contains(d.testid("audit-who").First().Text(), "treasurer@example.org") {
			t.Errorf("audit names %q", d.testid("audit-who").First().Text())
		}

		// The overview counts it paid, with the money received and a bar for today.
		ov := env.get(c, "/staff")
		if ov.status != http.StatusOK || ov.testid("overview-state").Filter(`[data-state=paid]`).Find(`[data-testid=overview-count]`).Text() != "1" ||
			ov.testid("overview-state").Filter(`[data-state=awaiting_payment]`).Find(`[data-testid=overview-count]`).Text() != "0" {
			t.Fatalf("overview states: %d %s", ov.status, ov.testid("overview-states").Text())
		}
		if got := ov.testid("money-received").Text(); got != "EUR "+amount {
			t.Errorf("received %q", got)
		}
		if got := ov.testid("overview-types").Text(); !strings.Contains(got, "Adult") || !strings.Contains(got, "Junior") {
			t.Errorf("by type %q", got)
		}
		if ov.doc.Find(`[data-testid=overview-svg] rect[data-series=payments]`).Length() != 1 || ov.doc.Find(`[data-testid=overview-svg] rect[data-series=registrations]`).Length() != 1 {
			t.Errorf("chart bars: %s", ov.testid("overview-chart").Text())
		}
		if p := env.get(c, "/staff?period=999"); p.status != http.StatusNotFound {
			t.Errorf("another period: %d", p.status)
		}

		// Resend the confirmation: a second confirmation, beside the
		// request for the transfer sent at the commit.
		expectRedirect(t, env.post(c, detailURL+"/resend-confirmation", url.Values{}), detailURL+"?done=resent-confirmation")
		if n := env.get(c, detailURL).doc.Find(historyMessages).Length(); n != 3 {
			t.Fatalf("%d messages after resending", n)
		}

		// Cancel asks first; then cancels and offers the refund.
		ask := env.post(c, detailURL+"/cancel", url.Values{})
		if ask.status != http.StatusOK || ask.testid("staff-confirm").Length() != 1 {
			t.Fatalf("cancel without confirmation: %d", ask.status)
		}
		if st := env.get(c, detailURL).testid("state").First().AttrOr("data-state", ""); st != "paid" {
			t.Fatalf("asking cancelled: %s", st)
		}
		expectRedirect(t, env.post(c, detailURL+"/cancel", url.Values{"confirmed": {"1"}}), detailURL+"?done=cancelled")
		d = env.get(c, detailURL)
		if d.testid("state").First().AttrOr("data-state", "") != "cancelled" || d.testid("order-status").Text() != staffview.OpsText.StatusCancelled || d.testid("action-refund").Length() != 1 {
			t.Fatalf("after cancelling: %s", d.body)
		}
		d.testid("person-membership").Each(func(_ int, ms *goquery.Selection) {
			if !strings.Contains(ms.Text(), staffview.OpsText.StatusCancelled) || ms.AttrOr("data-status", "") != "cancelled" {
				t.Fatalf("membership not cancelled: %s", ms.Text())
			}
		})
		ref := d.testid("action-refund").Parent().Find(`input[name=payment]`).AttrOr("value", "")
		expectRedirect(t, env.post(c, detailURL+"/refund", url.Values{"payment": {ref}, "confirmed": {"1"}}), detailURL+"?done=refunded")
		d = env.get(c, detailURL)
		if !strings.Contains(d.doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text(), "manual:treasurer@example.org") || d.testid("action-refund").Length() != 0 {
			t.Fatalf("after the refund: %s", d.testid("detail-history").Text())
		}
		if de := env.get(c, detailURL, "Accept-Language", "de"); !strings.Contains(de.doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text(), "An das Mitglied zurückgezahlt") {
			t.Fatalf("the refund in German: %q", de.doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text())
		}
		if p := env.post(c, detailURL+"/refund", url.Values{"payment": {ref}, "confirmed": {"1"}}); p.status != http.StatusConflict {
			t.Fatalf("second refund: %d", p.status)
		}
		var actions []string
		d.testid("audit-row").Each(func(_ int, s *goquery.Selection) { actions = append(actions, s.AttrOr("data-action", "")) })
		if strings.Join(actions, ",") != "payment.refund,registration.cancel,registration.resend_confirmation,payment.capture" {
			t.Fatalf("audit trail %v", actions)
		}

		// Another organisation's staff cannot see it; unknown ids are 404.
		if p := env.get(c, "/staff/registrations/999999"); p.status != http.StatusNotFound {
			t.Fatalf("unknown registration: %d", p.status)
		}
	})
}

// The history entries of a registration's page by kind: payment
// attempts, what captured or confirmed money, messages.
const (
	historyAttempts = `[data-testid=history-entry][data-kind=attempt]`
	historyPayments = `[data-testid=history-entry][data-kind=payment]`
	historyMessages = `[data-testid=history-entry][data-kind=message]`
)
