package mailview

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/text/language"

	"portal/views/lang"
)

// mailCase is one message, its text and HTML parts rendered in the
// language of ctx.
type mailCase struct {
	name string
	text func(ctx context.Context) (string, error)
	html templ.Component
}

// Data of the sample messages: names a catalogue text never contains.
const (
	sampleClub   = "Ruderclub Seeland"
	samplePeriod = "Saison 2027"
	sampleLink   = "https://portal.example/x?u=k&h=1"
)

var samplePersons = []string{"Anna Muster", "Ben Muster", "Cleo Muster"}

func mailCases() []mailCase {
	resume := ResumeModel{Club: sampleClub, Subject: "s", Persons: samplePersons, Link: sampleLink}
	unpaid := UnpaidReminderModel{Club: sampleClub, Subject: "s", Period: samplePeriod, Persons: samplePersons, Total: "CHF 120.00", Days: 3, Link: sampleLink}
	paylink := PaymentLinkModel{Club: sampleClub, Subject: "s", Period: samplePeriod, Persons: samplePersons, Total: "CHF 120.00", Link: sampleLink}
	member := MemberModel{Club: sampleClub, Subject: "s", Name: "Anna", Type: "Aktivmitglied", Period: samplePeriod, Ends: "31.12.2027", Contact: "info@seeland.example"}
	renewal := RenewalModel{Club: sampleClub, Subject: "s", Persons: samplePersons, Ending: "Saison 2026", Ends: "31.12.2026", Next: samplePeriod, Link: sampleLink, Contact: "info@seeland.example"}
	invitation := InvitationModel{Club: sampleClub, Subject: "s", Period: samplePeriod, Persons: samplePersons, Link: sampleLink, Expires: "1.3.2027"}
	confirmation := ConfirmationModel{Club: sampleClub, Subject: "s", Reference: "R-1", Order: "7", Period: samplePeriod,
		Members: []Member{{Name: "Anna Muster", Type: "Aktivmitglied"}}, Total: "CHF 120.00", CardsAttached: true, PortalURL: sampleLink}
	debitReturn := DebitReturnModel{Club: sampleClub, Subject: "s", Period: samplePeriod, Persons: samplePersons, Reason: "x",
		Returned: "EUR 120.00", Fee: "EUR 3.50", Total: "EUR 123.50", Link: sampleLink, MandateEnded: true}
	mandate := MandateModel{Club: sampleClub, Subject: "s", Event: "amended", Persons: samplePersons, Period: samplePeriod, Total: "EUR 120.00",
		Due: "15.03.2027", Creditor: sampleClub, CreditorID: "DE98ZZZ09999999999", Reference: "RCS-000042", Account: "DE89 … 3000", Link: sampleLink}
	return []mailCase{
		{"mandate", func(ctx context.Context) (string, error) { return MandateText(ctx, mandate) }, Mandate(mandate)},
		{"confirmation", func(ctx context.Context) (string, error) { return ConfirmationText(ctx, confirmation) }, Confirmation(confirmation)},
		{"resume", func(ctx context.Context) (string, error) { return ResumeText(ctx, resume) }, Resume(resume)},
		{"unpaid", func(ctx context.Context) (string, error) { return UnpaidReminderText(ctx, unpaid) }, UnpaidReminder(unpaid)},
		{"payment link", func(ctx context.Context) (string, error) { return PaymentLinkText(ctx, paylink) }, PaymentLink(paylink)},
		{"welcome", func(ctx context.Context) (string, error) { return WelcomeText(ctx, member) }, Welcome(member)},
		{"expiry", func(ctx context.Context) (string, error) { return ExpiryText(ctx, member) }, Expiry(member)},
		{"renewal", func(ctx context.Context) (string, error) { return RenewalText(ctx, renewal) }, Renewal(renewal)},
		{"invitation", func(ctx context.Context) (string, error) { return InvitationText(ctx, invitation) }, Invitation(invitation)},
		{"debit return", func(ctx context.Context) (string, error) { return DebitReturnText(ctx, debitReturn) }, DebitReturn(debitReturn)},
	}
}

// englishFragments are the English catalogue's texts that code writes
// differently: any of them in a message of code is an untranslated text.
func englishFragments(t *testing.T, code string) []string {
	t.Helper()
	out, err := lang.EnglishFragments(code, 8)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mailEnglishWords are English words no German or French message has.
var mailEnglishWords = regexp.MustCompile(`\b(the|and|your|you|with|for|Hello|Please|link|payment|membership|registration)\b`)

// TestEveryMailInGermanAndFrench: every e-mail, both parts, rendered in
// German and in French, has no English catalogue text, no English word
// outside its data, no message id (a missing translation) and the
// language's own greeting in its text part; the <html lang> of its HTML part follows.
func TestEveryMailInGermanAndFrench(t *testing.T) {
	greetings := map[string]string{"de": "Guten Tag", "fr": "Bonjour"}
	for _, code := range []string{"de", "fr"} {
		english := englishFragments(t, code)
		if len(english) < 50 {
			t.Fatalf("%d English fragments: the catalogue did not load", len(english))
		}
		ctx := lang.With(context.Background(), lang.New(code, language.Make(code+"-CH")))
		for _, c := range mailCases() {
			text, err := c.text(ctx)
			if err != nil {
				t.Fatalf("%s %s: %v", code, c.name, err)
			}
			var b bytes.Buffer
			if err := c.html.Render(ctx, &b); err != nil {
				t.Fatalf("%s %s: %v", code, c.name, err)
			}
			html := b.String()
			if !strings.Contains(html, `<html lang="`+code+`">`) {
				t.Errorf("%s %s: the HTML part is not lang=%s", code, c.name, code)
			}
			for part, body := range map[string]string{"text": text, "html": html} {
				if part == "text" && !strings.HasPrefix(body, greetings[code]) || strings.Contains(body, "mail_") {
					t.Errorf("%s %s %s part lacks %q or shows a message id:\n%s", code, c.name, part, greetings[code], body)
				}
				for _, frag := range english {
					if strings.Contains(body, frag) {
						t.Errorf("%s %s %s part has the English %q:\n%s", code, c.name, part, frag, body)
					}
				}
				words := body
				for _, data := range append([]string{sampleClub, samplePeriod, sampleLink, templ.EscapeString(sampleLink)}, samplePersons...) {
					words = strings.ReplaceAll(words, data, "")
				}
				if part == "html" {
					words = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(words, " ")
				}
				if w := mailEnglishWords.FindString(words); w != "" {
					t.Errorf("%s %s %s part has the English word %q:\n%s", code, c.name, part, w, body)
				}
			}
		}
	}
}

// TestMailNamesListInTheLanguage: persons are listed with the language's
// "and", and the days of a reminder take the right plural form.
func TestMailNamesListInTheLanguage(t *testing.T) {
	for _, tc := range []struct {
		code, names, oneDay, days string
	}{
		{"en", "Anna Muster, Ben Muster and Cleo Muster", "1 day ago", "3 days ago"},
		{"de", "Anna Muster, Ben Muster und Cleo Muster", "Vor 1 Tag haben", "Vor 3 Tagen haben"},
		{"fr", "Anna Muster, Ben Muster et Cleo Muster", "Il y a 1 jour,", "Il y a 3 jours,"},
	} {
		ctx := lang.With(context.Background(), lang.New(tc.code, language.Und))
		m := UnpaidReminderModel{Club: sampleClub, Period: samplePeriod, Persons: samplePersons, Total: "EUR 1.00", Days: 3, Link: sampleLink}
		text, err := UnpaidReminderText(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		m.Days = 1
		one, err := UnpaidReminderText(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, tc.names) || !strings.Contains(text, tc.days) || !strings.Contains(one, tc.oneDay) {
			t.Errorf("%s: want %q, %q and %q in:\n%s\n%s", tc.code, tc.names, tc.days, tc.oneDay, text, one)
		}
	}
}
