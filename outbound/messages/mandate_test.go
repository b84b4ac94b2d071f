package messages_test

import (
	"bytes"
	"mime"
	"strings"
	"testing"
	"time"

	"portal/engine/payment/settings"

	"github.com/ledongthuc/pdf"
	"github.com/uptrace/bun"
	"golang.org/x/text/language"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/directdebit"
	"portal/engine/enginetest"
	"portal/engine/payment"
	"portal/handlers/server"
	"portal/outbound/messages"
	"portal/views/lang"
)

// TestMandateMail: the mandate given on a direct-debit order is confirmed
// by e-mail over a real SMTP conversation, in the registration's language
// (German and French): its subject and both parts carry the amount and
// the due date, the parts the mandate reference, the Creditor Identifier
// and name and the masked account; the signed mandate is attached as a
// PDF that parses and holds the reference, the whole IBAN and the text as
// signed. The message is sent once, even when its job runs again.
func TestMandateMail(t *testing.T) {
	for _, tc := range []struct {
		code    string
		subject string
		wants   []string
	}{
		{"de", "Ihr Lastschriftmandat", []string{"Vorabankündigung", "Gläubiger-Identifikationsnummer", "Mandatsreferenz", "acht Wochen"}},
		{"fr", "votre mandat de prélèvement", []string{"notification préalable", "Identifiant créancier SEPA", "Référence unique du mandat", "huit semaines"}},
	} {
		t.Run(tc.code, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := t.Context()
				e := newScheduledEnv(t, db)
				demo := enginetest.Seed(t, db, engine.WithClock(e.clk.Now), engine.WithLogger(e.quiet), engine.WithPaymentLinks(server.PaymentLinks("https://portal.example")))
				messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example", HashSecret: "mandate-secret-0123456789",
					Payments: payment.Of(demo.Svc), Now: e.clk.Now})
				if _, err := settings.Of(demo.Svc).SetPaymentSettings(ctx, 1, settings.PaymentSettingsChange{BankCreditorName: str("Ruderclub Seeland e.V."),
					BankIBAN: str("DE89370400440532013000"), Methods: &[]string{"bank_transfer", "direct_debit"}, DebitCreditorID: str("DE98ZZZ09999999999")}); err != nil {
					t.Fatal(err)
				}
				form := demo.Commit(alex, robin)
				if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = ?", tc.code).Where("id = ?", form.ProcessID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				var order engine.Order
				if err := db.NewSelect().Model(&order).Where("process_instance_id = ?", form.ProcessID).Scan(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := db.NewUpdate().Model(&order).Set("payment_method = ?", payment.DirectDebitProvider).WherePK().Exec(ctx); err != nil {
					t.Fatal(err)
				}
				m, err := directdebit.Of(demo.Svc).GiveMandate(ctx, order.PayReference, directdebit.MandateInput{Holder: "Zoë Morgan", IBAN: "DE02120300000000202051", BIC: "BYLADEM1001",
					Consent: true, Language: tc.code})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.NewSelect().Model(&order).WherePK().Scan(ctx); err != nil || order.DebitDueOn == nil {
					t.Fatalf("order %+v %v", order, err)
				}
				e.run(t, time.Minute)
				e.run(t, time.Hour)
				got := e.srv.Wait(t, 1)
				if len(got) != 1 || strings.Join(got[0].To, ",") != "alex.morgan@example.org" {
					t.Fatalf("%d messages, to %v", len(got), got[0].To)
				}
				l := lang.New(tc.code, language.Make(tc.code))
				amount, due := l.Money(order.TotalMinor, order.Currency), l.Date(*order.DebitDueOn)
				h, parts := decoded(t, got[0].Data)
				subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				for _, want := range []string{tc.subject, amount, due} {
					if !strings.Contains(subject, want) {
						t.Errorf("subject %q lacks %q", subject, want)
					}
				}
				for _, part := range []string{"text/plain", "text/html"} {
					for _, want := range append(tc.wants[:len(tc.wants):len(tc.wants)], amount, due, m.Reference, "DE98ZZZ09999999999", "Ruderclub Seeland e.V.",
						"DE02 … 2051", "https://portal.example/pay/"+order.PayReference) {
						if !strings.Contains(strings.ReplaceAll(parts[part], "&amp;", "&"), want) {
							t.Errorf("the %s part lacks %q:\n%s", part, want, parts[part])
						}
					}
				}
				var file string
				for k, v := range parts {
					if strings.HasPrefix(k, "file:sepa-mandate-") && strings.HasSuffix(k, ".pdf") {
						file = v
					}
				}
				r, err := pdf.NewReader(strings.NewReader(file), int64(len(file)))
				if err != nil {
					t.Fatalf("the attachment is no PDF: %v", err)
				}
				text, err := r.Page(1).GetPlainText(nil)
				if err != nil {
					t.Fatal(err)
				}
				flat := strings.Join(strings.Fields(text), " ")
				for _, want := range []string{m.Reference, "DE02120300000000202051", "BYLADEM1001", "Zoë Morgan", "DE98ZZZ09999999999", directdebit.MandateTextVersion,
					strings.Join(strings.Fields(m.Text), " ")[:60]} {
					if !strings.Contains(flat, want) && !bytes.Contains([]byte(text), []byte(want)) {
						t.Errorf("the PDF lacks %q:\n%s", want, text)
					}
				}
			})
		})
	}
}

func str(s string) *string { return &s }
