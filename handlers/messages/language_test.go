package messages_test

import (
	"mime"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
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
		if !strings.Contains(subject, "Ihre Mitgliedschaft für") {
			t.Errorf("subject %q", subject)
		}
		total := strings.Replace(engine.FormatAmount(res.Order.TotalMinor), ".", ",", 1) + "\u00a0" + res.Order.Currency
		for part, wants := range map[string][]string{
			"text/plain": {"Guten Tag", "Ihre Zahlung an Riverside Rowing Club ist eingegangen", "Referenz: " + res.Reference, "Total bezahlt: " + total, "Der Mitgliederausweis jedes Mitglieds liegt als PDF bei"},
			"text/html":  {`<html lang="de">`, "Ihre Mitgliedschaft ist bestätigt", "Wie es weitergeht", total},
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
