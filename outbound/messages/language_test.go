package messages_test

import (
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/registration"
	"portal/outbound/messages"
)

// TestConfirmationInTheMembersLanguage: a member who registered in German
// gets the confirmation in German, with German money.
func TestConfirmationInTheMembersLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := newEnv(t, db)
		form := e.demo.Commit(alex, robin)
		if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = 'de'").Where("id = ?", form.ProcessID).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		res := e.demo.Pay(form)
		if n := e.work(t); n != 1 {
			t.Fatalf("ran %d jobs, want the confirmation", n)
		}
		h, parts := decoded(t, e.srv.Wait(t, 1)[0].Data)
		subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
		// The club's own texts too: the period's and the types' German names.
		if !strings.Contains(subject, "Ihre Mitgliedschaft für") || !strings.Contains(subject, "Saison ") {
			t.Errorf("subject %q", subject)
		}
		total := strings.Replace(engine.FormatAmount(res.Order.TotalMinor), ".", ",", 1) + "\u00a0" + res.Order.Currency
		for part, wants := range map[string][]string{
			"text/plain": {"Guten Tag", "Ihre Zahlung an Riverside Rowing Club ist eingegangen", "Referenz: " + res.Reference, "Total bezahlt: " + total, "Der Mitgliederausweis jedes Mitglieds liegt als PDF bei"},
			"text/html":  {`<html lang="de">`, "Ihre Mitgliedschaft ist bestätigt", "Wie es weitergeht", total, "Erwachsene", "Jugend"},
		} {
			for _, want := range wants {
				if !strings.Contains(parts[part], want) {
					t.Errorf("%s part lacks %q:\n%s", part, want, parts[part])
				}
			}
			for _, english := range []string{"Hello", "What happens next", "Total paid", "has arrived"} {
				if strings.Contains(parts[part], english) {
					t.Errorf("%s part has the English %q", part, english)
				}
			}
		}
	})
}

// TestUnpaidReminderInTheMembersLanguage: over SMTP, the reminder of a
// member who registered in German arrives in German, subject included,
// with German money; one who registered in French gets French.
func TestUnpaidReminderInTheMembersLanguage(t *testing.T) {
	for _, tc := range []struct {
		code, subject string
		wants         []string
	}{
		{"de", "Riverside Rowing Club: Ihr Mitgliederbeitrag ist noch offen",
			[]string{"Guten Tag", "Vor 3 Tagen haben Sie Alex Morgan und Robin Morgan bei Riverside Rowing Club", "ist noch nicht eingegangen"}},
		{"fr", "Riverside Rowing Club : votre cotisation n’est pas encore payée",
			[]string{"Bonjour", "Il y a 3 jours, vous avez inscrit Alex Morgan et Robin Morgan auprès de Riverside Rowing Club", "n’est pas encore arrivé"}},
	} {
		t.Run(tc.code, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				e := newScheduledEnv(t, db)
				messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "reminder-secret-0123456789", Now: e.clk.Now})
				registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, e.clk.Now, e.quiet)
				message.ScheduleMessages(e.r, db, e.clk.Now, e.quiet)
				demo := enginetest.Seed(t, db, engine.WithClock(e.clk.Now))
				form := demo.Commit(alex, robin)
				if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = ?", tc.code).Where("id = ?", form.ProcessID).Exec(t.Context()); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					e.run(t, 24*time.Hour)
				}
				got := e.srv.Wait(t, 1)
				h, parts := decoded(t, got[0].Data)
				subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				if subject != tc.subject {
					t.Errorf("subject %q, want %q", subject, tc.subject)
				}
				var order engine.Order
				if err := db.NewSelect().Model(&order).Where("process_instance_id = ?", form.ProcessID).Scan(t.Context()); err != nil {
					t.Fatal(err)
				}
				// Both languages write 120,00 EUR (the demo's organisation names no region).
				money := strings.Replace(engine.FormatAmount(order.TotalMinor), ".", ",", 1) + "\u00a0" + order.Currency
				for _, part := range []string{"text/plain", "text/html"} {
					for _, want := range append(tc.wants, money) {
						if part == "text/html" && want == tc.wants[0] {
							continue // the HTML part greets with its heading
						}
						if !strings.Contains(parts[part], want) {
							t.Errorf("%s part lacks %q:\n%s", part, want, parts[part])
						}
					}
					for _, english := range []string{"Hello", "days ago", "has not arrived", "your registration", "Go to my registration"} {
						if strings.Contains(parts[part], english) {
							t.Errorf("%s part has the English %q", part, english)
						}
					}
				}
			})
		})
	}
}
