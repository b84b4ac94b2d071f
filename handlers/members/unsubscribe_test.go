package members_test

import (
	"bytes"
	"context"
	"net/http"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/clock"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/handlers/handlertest"
)

// TestOneClickUnsubscribe: an unpaid reminder, received over SMTP,
// carries a one-click unsubscribe link (RFC 8058); opening it changes
// nothing, the one-click POST (no session, as a mail provider sends it)
// stops the reminders for the message's recipients, and the next
// reminder is not sent; a tampered link is refused. The payment's
// confirmation still goes out.
func TestOneClickUnsubscribe(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		env := handlertest.NewEnv(t, db)
		demo := enginetest.Seed(t, db)
		form := demo.Commit(1, 3)
		at := clock.Now().UTC().Add(3*24*time.Hour + time.Hour)
		mr := newMailRunner(env, func() time.Time { return at })
		if n, err := message.QueueUnpaidReminders(ctx, db, at); err != nil || n != 1 {
			t.Fatalf("queued %d, %v", n, err)
		}
		mr.work()
		got := mr.srv.Wait(t, 1)
		m, err := netmail.ReadMessage(bytes.NewReader(got[0].Data))
		if err != nil {
			t.Fatal(err)
		}
		header := m.Header.Get("List-Unsubscribe")
		link, _, _ := strings.Cut(strings.TrimPrefix(header, "<"), ">")
		if !strings.HasPrefix(link, env.Server.URL+"/unsubscribe?t=") || m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
			t.Fatalf("List-Unsubscribe %q, List-Unsubscribe-Post %q", header, m.Header.Get("List-Unsubscribe-Post"))
		}
		path := strings.TrimPrefix(link, env.Server.URL)
		optedOut := func() int {
			n, err := db.NewSelect().TableExpr("message_opt_outs").Where("organisation_id = 1 AND category = ?", message.OptOutReminders).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}

		page := env.Get(env.NewClient(), path)
		if page.Status != http.StatusOK || page.TestID("confirm-unsubscribe").Length() != 1 || optedOut() != 0 {
			t.Fatalf("opening the link: %d, opted out %d:\n%s", page.Status, optedOut(), page.Body)
		}
		// In the reader's language: German asked, no English text left.
		german := env.Get(env.NewClient(), path, "Accept-Language", "de-CH")
		if body := string(german.Body); german.Status != http.StatusOK || german.Doc.Find("html").AttrOr("lang", "") != "de" ||
			!strings.Contains(body, "Keine Erinnerungen mehr erhalten?") || !strings.Contains(body, "sendet keine Erinnerungen mehr an alex.morgan@example.org") ||
			german.TestID("confirm-unsubscribe").Text() != "Abmelden" || strings.Contains(body, "will send no more") || strings.Contains(body, "reminders") {
			t.Fatalf("the page in German:\n%s", body)
		}
		if bad := env.Get(env.NewClient(), "/unsubscribe?t=x", "Accept-Language", "fr"); bad.Status != http.StatusNotFound || !strings.Contains(string(bad.Body), "Ce lien de désabonnement n’est pas valable") {
			t.Fatalf("a bad link in French: %d\n%s", bad.Status, bad.Body)
		}
		for _, bad := range []string{path[:len(path)-2] + "xx", "/unsubscribe?t=", "/unsubscribe"} {
			if p := env.Post(env.NewClient(), bad, nil); p.Status != http.StatusNotFound || optedOut() != 0 {
				t.Fatalf("POST %s: %d, opted out %d", bad, p.Status, optedOut())
			}
		}
		req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader("List-Unsubscribe=One-Click"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || optedOut() != 1 {
			t.Fatalf("one-click POST: %d, opted out %d", res.StatusCode, optedOut())
		}
		// Twice is no error.
		if p := env.Post(env.NewClient(), path, nil); p.Status != http.StatusOK || p.TestID("unsubscribe-done").Length() != 1 {
			t.Fatalf("second POST: %d:\n%s", p.Status, p.Body)
		}

		// Day 10: the reminder is not sent; paying still confirms.
		at = at.Add(7 * 24 * time.Hour)
		if n, err := message.QueueUnpaidReminders(ctx, db, at); err != nil || n != 1 {
			t.Fatalf("day 10: queued %d, %v", n, err)
		}
		mr.work()
		if n := len(mr.srv.Received()); n != 1 {
			t.Fatalf("%d messages after unsubscribing, want the first reminder only", n)
		}
		demo.Pay(form)
		at = clock.Now().UTC().Add(time.Minute)
		mr.work()
		if got := mr.srv.Wait(t, 2); !strings.Contains(string(got[1].Data), "is confirmed") {
			t.Fatalf("no confirmation after unsubscribing from reminders")
		}
	})
}
