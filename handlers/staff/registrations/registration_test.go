package registrations_test

import (
	"context"
	"fmt"
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
	"portal/engine/registration"
	"portal/engine/staff"
	"portal/handlers/handlertest"
	"portal/views/staffview"
)

// TestStaffRegistrationReadsLikeARecord: a registration's page names
// every state, event and message in words of the page's language, shows
// the answers as the member saw them, only the persons of the
// registration badged by their memberships' state, the RF reference, a
// capture form filled with what is owed and today's date, and asks
// before cancelling with buttons that say what they do.
func TestStaffRegistrationReadsLikeARecord(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, rf := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		detail := "/staff/registrations/" + strconv.FormatInt(order.ProcessInstanceID, 10)
		var inst engine.ProcessInstance
		if err := db.NewSelect().Model(&inst).Where("id = ?", order.ProcessInstanceID).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}

		p := env.Get(tr, detail)
		if p.Status != http.StatusOK {
			t.Fatalf("detail: %d", p.Status)
		}
		// The household as registered: its persons only, pending payment.
		persons := p.TestID("household-person")
		if persons.Length() != len(inst.SelectedPersons) {
			t.Errorf("%d persons shown, the registration has %d", persons.Length(), len(inst.SelectedPersons))
		}
		persons.Each(func(_ int, s *goquery.Selection) {
			ms := s.Find(`[data-testid="person-membership"]`)
			if ms.Length() == 0 || ms.AttrOr("data-status", "") != "pending" || !strings.Contains(ms.Text(), staffview.OpsText.StatusPendingPayment) {
				t.Errorf("person %q: membership %q (%s)", s.Find(`[data-testid="person-name"]`).Text(), ms.Text(), ms.AttrOr("data-status", ""))
			}
		})
		// Answers as the member saw them.
		answers := handlertest.SpacedText(p.TestID("detail-answers"))
		for _, want := range []string{": Yes", ": No", ": Medium", ": Small", "Club shirt size"} {
			if !strings.Contains(answers, want) {
				t.Errorf("answers lack %q: %s", want, answers)
			}
		}
		p.TestID("answer").Each(func(_ int, s *goquery.Selection) {
			if v := s.Text(); strings.HasSuffix(v, ": 1") || strings.HasSuffix(v, ": 0") || strings.HasSuffix(v, ": M") {
				t.Errorf("answer shown as stored: %q", v)
			}
		})
		if p.TestID("answer-not-asked").Length() == 0 {
			t.Error("the step nobody was asked (transfer club) is not said so")
		}
		// The RF reference, and the capture asking for what is owed today.
		if p.TestID("summary-transfer-reference").Text() != rf.String() || p.TestID("order-transfer-reference").Text() != rf.String() {
			t.Errorf("RF reference: %q / %q, want %q", p.TestID("summary-transfer-reference").Text(), p.TestID("order-transfer-reference").Text(), rf)
		}
		today := clock.Now().UTC().Format(time.DateOnly)
		if a, b := p.TestID("capture-amount").AttrOr("value", ""), p.TestID("capture-booked").AttrOr("value", ""); a != engine.FormatAmount(order.TotalMinor) || b != today {
			t.Errorf("capture pre-filled with %q on %q, want %q on %q", a, b, engine.FormatAmount(order.TotalMinor), today)
		}
		// The history in words: no stored codes, a message with its recipient.
		history := handlertest.SpacedText(p.TestID("detail-history"))
		for _, code := range []string{"bank_transfer", "PENDING", "transfer_request", " · · "} {
			if strings.Contains(history, code) {
				t.Errorf("history shows the code %q: %s", code, history)
			}
		}
		if !strings.Contains(history, "Payment by bank transfer asked for: ") {
			t.Errorf("history lacks the attempt: %s", history)
		}
		found := false
		p.TestID("history-entry").Each(func(_ int, s *goquery.Selection) {
			if s.AttrOr("data-kind", "") == "message" && s.Find(`[data-testid="history-title"]`).Text() == staffview.RegistrationText.MsgTransferRequest {
				found = true
				if d := s.Find(`[data-testid="history-detail"]`).Text(); !strings.HasPrefix(d, "to ") || !strings.Contains(d, "@") {
					t.Errorf("transfer request recipient %q", d)
				}
			}
		})
		if !found {
			t.Errorf("no transfer request in the history: %s", history)
		}

		// German and French: the same page in their words.
		for _, lc := range []struct {
			code                           string
			yes, no, medium, history, keep string
		}{
			{"de", ": Ja", ": Nein", ": Mittel", "Zahlungen und Nachrichten", "Anmeldung behalten"},
			{"fr", ": Oui", ": Non", ": Moyenne", "Paiements et messages", "Garder l’inscription"},
		} {
			handlertest.ExpectRedirect(t, env.Get(tr, "/staff?lang="+lc.code), "/staff")
			p := env.Get(tr, detail)
			text := handlertest.SpacedText(p.TestID("detail-answers")) + handlertest.SpacedText(p.TestID("detail-history"))
			for _, want := range []string{lc.yes, lc.no, lc.medium, lc.history} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: lacks %q: %s", lc.code, want, text)
				}
			}
			if strings.Contains(text, "Payment by") || strings.Contains(text, ": Yes") {
				t.Errorf("%s: English left: %s", lc.code, text)
			}
			q := env.Post(tr, detail+"/cancel", url.Values{})
			if q.TestID("staff-confirm-cancel").Text() != lc.keep {
				t.Errorf("%s: cancel question's buttons %q / %q", lc.code, q.TestID("staff-confirm-yes").Text(), q.TestID("staff-confirm-cancel").Text())
			}
		}
		handlertest.ExpectRedirect(t, env.Get(tr, "/staff?lang=en"), "/staff")
		q := env.Post(tr, detail+"/cancel", url.Values{})
		if q.TestID("staff-confirm-question").Text() != "Cancel this registration?" || q.TestID("staff-confirm-yes").Text() != "Cancel registration" ||
			q.TestID("staff-confirm-cancel").Text() != "Keep registration" {
			t.Errorf("cancel question %q: %q / %q", q.TestID("staff-confirm-question").Text(), q.TestID("staff-confirm-yes").Text(), q.TestID("staff-confirm-cancel").Text())
		}
		if env.OrderStatus(order.ID) != engine.OrderUnpaid {
			t.Error("asking cancelled the order")
		}
	})
}

// TestStaffCaptureToldInWords: a part captured on the registration says
// what arrived and what remains, sent again it says the same; the rest
// captured from the open payments list (pre-filled with what is owed and
// today) says complete, sent again too; another transfer afterwards says
// paid already and owed back. The archive is then said in words.
func TestStaffCaptureToldInWords(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewStaffBankEnv(t, db, true)
		order, _ := env.UnpaidDemoOrder()
		env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
		tr := env.MustStaffSignIn("treasurer@example.org", "/staff")
		id := strconv.FormatInt(order.ProcessInstanceID, 10)
		detail := "/staff/registrations/" + id
		money := func(minor int64) string { return engine.FormatMoney(minor, order.Currency) }

		part := url.Values{"amount": {"10.00"}, "booked": {"2026-01-02"}}
		for range 2 { // the same form twice: the state it finds
			handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", part), detail+"?done=captured-partial")
			p := env.Get(tr, detail+"?done=captured-partial")
			want := fmt.Sprintf(staffview.RegistrationText.CapturedPart, money(1000), money(order.TotalMinor-1000))
			if got := p.TestID("staff-flash").Text(); got != want {
				t.Fatalf("after a part: %q, want %q", got, want)
			}
			if !strings.Contains(handlertest.SpacedText(p.TestID("detail-history")), fmt.Sprintf(staffview.RegistrationText.EvPart, money(1000))) {
				t.Errorf("history lacks the part: %s", handlertest.SpacedText(p.TestID("detail-history")))
			}
		}

		// The rest, from the open payments list.
		rest := engine.FormatAmount(order.TotalMinor - 1000)
		list := env.Get(tr, "/staff/open-payments")
		row := list.Doc.Find(`[data-testid="open-payment-row"][data-registration="` + id + `"]`)
		amount, booked := row.Find(`[data-testid="open-payment-capture-amount"]`), row.Find(`[data-testid="open-payment-capture-booked"]`)
		if amount.AttrOr("value", "") != rest || booked.AttrOr("value", "") != clock.Now().UTC().Format(time.DateOnly) {
			t.Fatalf("list capture pre-filled with %q on %q, want %q today", amount.AttrOr("value", ""), booked.AttrOr("value", ""), rest)
		}
		formID := amount.AttrOr("form", "")
		f := list.Doc.Find(`form#` + formID)
		if f.Length() != 1 || f.AttrOr("action", "") != detail+"/capture" || f.Find(`input[name="back"]`).AttrOr("value", "") != "open-payments" {
			t.Fatalf("capture form %q: %d, action %q", formID, f.Length(), f.AttrOr("action", ""))
		}
		form := url.Values{"amount": {rest}, "booked": {booked.AttrOr("value", "")}, "back": {"open-payments"}}
		back := "/staff/open-payments?done=captured&registration=" + id
		for range 2 {
			handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", form), back)
			want := fmt.Sprintf(staffview.Text.DetTitle, order.ProcessInstanceID) + ": " + fmt.Sprintf(staffview.RegistrationText.CapturedComplete, money(order.TotalMinor))
			if got := env.Get(tr, back).TestID("staff-flash").Text(); got != want {
				t.Fatalf("after the rest: %q, want %q", got, want)
			}
		}
		if env.OrderStatus(order.ID) != engine.OrderPaid {
			t.Fatalf("order %s", env.OrderStatus(order.ID))
		}
		if n := env.Count((*engine.PaymentEvent)(nil), "event_type = ?", "bank_transfer.capture"); n != 2 {
			t.Fatalf("%d capture events, want 2", n)
		}
		p := env.Get(tr, detail+"?done=captured")
		if got, want := p.TestID("staff-flash").Text(), fmt.Sprintf(staffview.RegistrationText.CapturedComplete, money(order.TotalMinor)); got != want {
			t.Errorf("on the registration: %q, want %q", got, want)
		}
		for _, s := range []string{"person-membership"} {
			p.TestID(s).Each(func(_ int, m *goquery.Selection) {
				if m.AttrOr("data-status", "") != "active" {
					t.Errorf("paid, a membership is %q", m.Text())
				}
			})
		}

		// Another transfer: paid already, owed back.
		second := url.Values{"amount": {"5.00"}, "booked": {"2026-01-04"}}
		handlertest.ExpectRedirect(t, env.Post(tr, detail+"/capture", second), detail+"?done=captured-second")
		p = env.Get(tr, detail+"?done=captured-second")
		if got, want := p.TestID("staff-flash").Text(), fmt.Sprintf(staffview.RegistrationText.CapturedSecond, money(500)); got != want {
			t.Errorf("second transfer: %q, want %q", got, want)
		}
		if !strings.Contains(handlertest.SpacedText(p.TestID("detail-history")), fmt.Sprintf(staffview.RegistrationText.RefundDue, money(500))) {
			t.Errorf("history lacks the refund owed: %s", handlertest.SpacedText(p.TestID("detail-history")))
		}

		// Archived: said in words, no list of questions.
		if _, err := registration.ArchiveFinished(context.Background(), db, clock.Now().Add(registration.ArchiveAfter+48*time.Hour), registration.ArchiveRemove); err != nil {
			t.Fatal(err)
		}
		p = env.Get(tr, detail)
		archive := p.TestID("detail-archive").Text()
		if !strings.Contains(archive, "answers of") || strings.Contains(archive, "{") || p.TestID("answer-step").Length() != 0 {
			t.Errorf("archive %q, %d steps listed", archive, p.TestID("answer-step").Length())
		}
	})
}
