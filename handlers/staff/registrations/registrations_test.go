package registrations_test

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
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffRegistrationPages walks a treasurer through a registration
// paid by bank transfer: find it, read it, capture the transfer, resend
// the confirmation, cancel and refund; every change is in its audit trail.
func TestStaffRegistrationPages(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.BankTransferStaffEnv(t, db)
		env.CompleteDemo(env.NewClient())
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		env.AddStaff("viewer@example.org", staff.RoleViewer)
		c := env.MustStaffSignIn("treasurer@example.org", "/staff/registrations")

		list := env.Get(c, "/staff/registrations")
		if list.Status != http.StatusOK || list.TestID("registration-row").Length() != 1 {
			t.Fatalf("list: %d %s", list.Status, list.Body)
		}
		row := list.TestID("registration-row")
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
			p := env.Get(c, "/staff/registrations?"+tc.query)
			if p.Status != http.StatusOK || p.TestID("registration-row").Length() != tc.rows {
				t.Errorf("%s: %d, %d rows, want %d", tc.query, p.Status, p.TestID("registration-row").Length(), tc.rows)
			}
		}
		for _, bad := range []string{"state=lost", "page=-1", "period=x"} {
			if p := env.Get(c, "/staff/registrations?"+bad); p.Status != http.StatusBadRequest || p.TestID("staff-message-text").Text() == "" {
				t.Errorf("%s: %d", bad, p.Status)
			}
		}

		// The CSV export, for treasurers, not viewers.
		exp := env.Do(c, http.MethodGet, "/staff/registrations.csv?state=awaiting_payment", nil)
		recs, err := csv.NewReader(strings.NewReader(string(exp.Body))).ReadAll()
		if exp.Status != http.StatusOK || err != nil || len(recs) != 2 || recs[1][0] != strconv.FormatInt(id, 10) || recs[1][7] != order.PayReference {
			t.Fatalf("export: %d %v %q", exp.Status, err, exp.Body)
		}
		viewer := env.MustStaffSignIn("viewer@example.org", "/staff/registrations")
		if p := env.Get(viewer, "/staff/registrations"); p.TestID("registrations-csv").Length() != 0 {
			t.Error("a viewer is offered the export")
		}

		// The detail.
		d := env.Get(c, detailURL)
		if d.Status != http.StatusOK || d.TestID("household-person").Length() != 2 ||
			d.TestID("answer").Length() == 0 || d.TestID("order-reference").Text() != order.PayReference || d.Doc.Find(historyAttempts).Length() != 1 {
			t.Fatalf("detail: %d %s", d.Status, d.Body)
		}
		if d.TestID("capture-form").Length() != 1 || d.TestID("action-resend-link").Length() != 1 || d.TestID("action-resend-confirmation").Length() != 0 {
			t.Fatalf("actions of an unpaid registration: %s", d.TestID("detail-actions").Text())
		}
		if p := env.Get(viewer, detailURL); p.TestID("capture-form").Length() != 0 || p.TestID("action-cancel").Length() != 0 {
			t.Fatal("a viewer is offered actions")
		}

		// Bad input changes nothing and says what is wrong.
		for _, form := range []url.Values{{"amount": {"abc"}, "booked": {"2026-01-02"}}, {"amount": {"10"}, "booked": {"tomorrow"}}, {"amount": {"-5"}, "booked": {"2026-01-02"}}} {
			p := env.Post(c, detailURL+"/capture", form)
			if p.Status != http.StatusUnprocessableEntity || p.TestID("staff-message-text").Text() == "" {
				t.Errorf("capture %v: %d", form, p.Status)
			}
		}
		if after := env.Get(c, detailURL); after.Doc.Find(historyPayments).Length() != 0 {
			t.Fatal("a refused capture recorded an event")
		}

		// The capture completes the registration and queues the confirmation.
		amount := engine.FormatMoney(order.TotalMinor, "")[1:]
		res := env.Post(c, detailURL+"/capture", url.Values{"amount": {amount}, "booked": {"2026-01-02"}, "note": {"statement 7"}})
		handlertest.ExpectRedirect(t, res, detailURL+"?done=captured")
		d = env.Get(c, detailURL+"?done=captured")
		if d.TestID("staff-flash").Text() == "" || d.TestID("state").First().AttrOr("data-state", "") != "paid" || d.Doc.Find(historyAttempts).Find(`[data-testid=history-status]`).Text() != staffview.OpsText.StatusSucceeded {
			t.Fatalf("after the capture: %s", d.Body)
		}
		if got := d.Doc.Find(historyMessages).Text(); !strings.Contains(got, staffview.RegistrationText.MsgConfirmation) {
			t.Fatalf("messages after the capture: %q", got)
		}
		// The form sent twice captures once.
		handlertest.ExpectRedirect(t, env.Post(c, detailURL+"/capture", url.Values{"amount": {amount}, "booked": {"2026-01-02"}, "note": {"statement 7"}}), detailURL+"?done=captured")
		if again := env.Get(c, detailURL); again.Doc.Find(historyAttempts).Length() != 1 || again.Doc.Find(historyPayments).Length() != 1 {
			t.Fatalf("the capture sent twice: %d payments, %d events", again.Doc.Find(historyAttempts).Length(), again.Doc.Find(historyPayments).Length())
		}
		if got := d.TestID("audit-row").First().AttrOr("data-action", ""); got != "payment.capture" || d.TestID("audit-action").First().Text() != "recorded a payment received" {
			t.Fatalf("audit after the capture: %q %q", got, d.TestID("audit-action").First().Text())
		}
		if !strings.Contains(d.TestID("audit-who").First().Text(), "treasurer@example.org") {
			t.Errorf("audit names %q", d.TestID("audit-who").First().Text())
		}

		// The overview counts it paid, with the money received and a bar for today.
		ov := env.Get(c, "/staff")
		if ov.Status != http.StatusOK || ov.TestID("overview-state").Filter(`[data-state=paid]`).Find(`[data-testid=overview-count]`).Text() != "1" ||
			ov.TestID("overview-state").Filter(`[data-state=awaiting_payment]`).Find(`[data-testid=overview-count]`).Text() != "0" {
			t.Fatalf("overview states: %d %s", ov.Status, ov.TestID("overview-states").Text())
		}
		if got := ov.TestID("money-received").Text(); got != "EUR "+amount {
			t.Errorf("received %q", got)
		}
		if got := ov.TestID("overview-types").Text(); !strings.Contains(got, "Adult") || !strings.Contains(got, "Junior") {
			t.Errorf("by type %q", got)
		}
		if ov.Doc.Find(`[data-testid=overview-svg] rect[data-series=payments]`).Length() != 1 || ov.Doc.Find(`[data-testid=overview-svg] rect[data-series=registrations]`).Length() != 1 {
			t.Errorf("chart bars: %s", ov.TestID("overview-chart").Text())
		}
		if p := env.Get(c, "/staff?period=999"); p.Status != http.StatusNotFound {
			t.Errorf("another period: %d", p.Status)
		}

		// Resend the confirmation: a second confirmation, beside the
		// request for the transfer sent at the commit.
		handlertest.ExpectRedirect(t, env.Post(c, detailURL+"/resend-confirmation", url.Values{}), detailURL+"?done=resent-confirmation")
		if n := env.Get(c, detailURL).Doc.Find(historyMessages).Length(); n != 3 {
			t.Fatalf("%d messages after resending", n)
		}

		// Cancel asks first; then cancels and offers the refund.
		ask := env.Post(c, detailURL+"/cancel", url.Values{})
		if ask.Status != http.StatusOK || ask.TestID("staff-confirm").Length() != 1 {
			t.Fatalf("cancel without confirmation: %d", ask.Status)
		}
		if st := env.Get(c, detailURL).TestID("state").First().AttrOr("data-state", ""); st != "paid" {
			t.Fatalf("asking cancelled: %s", st)
		}
		handlertest.ExpectRedirect(t, env.Post(c, detailURL+"/cancel", url.Values{"confirmed": {"1"}}), detailURL+"?done=cancelled")
		d = env.Get(c, detailURL)
		if d.TestID("state").First().AttrOr("data-state", "") != "cancelled" || d.TestID("order-status").Text() != staffview.OpsText.StatusCancelled || d.TestID("action-refund").Length() != 1 {
			t.Fatalf("after cancelling: %s", d.Body)
		}
		d.TestID("person-membership").Each(func(_ int, ms *goquery.Selection) {
			if !strings.Contains(ms.Text(), staffview.OpsText.StatusCancelled) || ms.AttrOr("data-status", "") != "cancelled" {
				t.Fatalf("membership not cancelled: %s", ms.Text())
			}
		})
		ref := d.TestID("action-refund").Parent().Find(`input[name=payment]`).AttrOr("value", "")
		handlertest.ExpectRedirect(t, env.Post(c, detailURL+"/refund", url.Values{"payment": {ref}, "confirmed": {"1"}}), detailURL+"?done=refunded")
		d = env.Get(c, detailURL)
		if !strings.Contains(d.Doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text(), "manual:treasurer@example.org") || d.TestID("action-refund").Length() != 0 {
			t.Fatalf("after the refund: %s", d.TestID("detail-history").Text())
		}
		if de := env.Get(c, detailURL, "Accept-Language", "de"); !strings.Contains(de.Doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text(), "An das Mitglied zurückgezahlt") {
			t.Fatalf("the refund in German: %q", de.Doc.Find(`[data-testid=history-entry][data-kind=refund]`).Text())
		}
		if p := env.Post(c, detailURL+"/refund", url.Values{"payment": {ref}, "confirmed": {"1"}}); p.Status != http.StatusConflict {
			t.Fatalf("second refund: %d", p.Status)
		}
		var actions []string
		d.TestID("audit-row").Each(func(_ int, s *goquery.Selection) { actions = append(actions, s.AttrOr("data-action", "")) })
		if strings.Join(actions, ",") != "payment.refund,registration.cancel,registration.resend_confirmation,payment.capture" {
			t.Fatalf("audit trail %v", actions)
		}

		// Another organisation's staff cannot see it; unknown ids are 404.
		if p := env.Get(c, "/staff/registrations/999999"); p.Status != http.StatusNotFound {
			t.Fatalf("unknown registration: %d", p.Status)
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
