package messages_test

import (
	"bytes"
	"image/png"
	"mime"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/banktransfer"
	"portal/engine/dbtest"
	"portal/engine/enginetest"
	"portal/engine/message"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/outbound/messages"
)

// TestBankTransferMails: a club paid by bank transfer asks for the
// transfer by e-mail at the commit, over a real SMTP conversation, in the
// member's language: the text part lists creditor, IBAN, BIC, amount and
// RF reference; the HTML part shows the QR code as an inline PNG (its
// Content-ID referred to as cid:), which decodes to the transfer's EPC or
// QR-bill payload. After part of the money arrived, the unpaid reminder
// asks for the rest only, in its fields and in its QR code.
func TestBankTransferMails(t *testing.T) {
	swiss := &banking.Address{Street: "Seestrasse", Number: "7", PostCode: "8002", Town: "Zürich", Country: "CH"}
	for _, tc := range []struct {
		code     string
		creditor banking.Creditor
		kind     banking.QRKind
		// wants are texts of the language in the transfer request.
		subject string
		wants   []string
		partly  string
	}{
		{"en", banking.Creditor{Name: "Riverside Rowing Club", IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX"}, banking.KindEPC,
			"Riverside Rowing Club: your registration is saved, please transfer",
			[]string{"Account holder: Riverside Rowing Club", "IBAN: DE89 3704 0044 0532 0130 00", "BIC: COBADEFFXXX"},
			"Part of the amount has arrived already"},
		{"de", banking.Creditor{Name: "Ruderclub Riverside", IBAN: "CH9300762011623852957", Address: swiss}, banking.KindSwissQR,
			"Riverside Rowing Club: Ihre Anmeldung ist gespeichert, bitte überweisen Sie",
			[]string{"Kontoinhaber: Ruderclub Riverside", "Adresse: Seestrasse 7, 8002 Zürich, CH", "IBAN: CH93 0076 2011 6238 5295 7", "ist gespeichert"},
			"Ein Teil des Betrags ist bereits eingegangen"},
		{"fr", banking.Creditor{Name: "Club d'aviron Riverside", IBAN: "FR1420041010050500013M02606"}, banking.KindEPC,
			"Riverside Rowing Club : votre inscription est enregistrée, veuillez virer",
			[]string{"Titulaire du compte: Club d'aviron Riverside", "IBAN: FR14 2004 1010 0505 0001 3M02 606", "est enregistrée"},
			"Une partie du montant est déjà arrivée"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := t.Context()
				e := newScheduledEnv(t, db)
				links := server.PaymentLinks("https://portal.example")
				bt, err := banktransfer.New(tc.creditor, func(ref string, amount int64) string { return links.PayLink("", ref, amount) })
				if err != nil {
					t.Fatal(err)
				}
				demo := enginetest.Seed(t, db, engine.WithClock(e.clk.Now), engine.WithLogger(e.quiet), engine.WithPaymentLinks(links),
					payment.WithPaymentProviders(func(int64) engine.PaymentProvider { return bt }))
				messages.Register(e.r, messages.Deps{DB: db, Sender: e.sender, BaseURL: "https://portal.example",
					HashSecret: "transfer-secret-0123456789", Payments: payment.Of(demo.Svc), Now: e.clk.Now})
				registration.ScheduleLifecycle(e.r, db, registration.ArchiveKeep, e.clk.Now, e.quiet)
				message.ScheduleMessages(e.r, db, e.clk.Now, e.quiet)
				// The member registers in tc.code (as the pages record it).
				form := demo.Commit(alex, robin)
				if _, err := db.NewUpdate().Model((*engine.ProcessInstance)(nil)).Set("language = ?", tc.code).Where("id = ?", form.ProcessID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				var order engine.Order
				if err := db.NewSelect().Model(&order).Where("process_instance_id = ?", form.ProcessID).Scan(ctx); err != nil {
					t.Fatal(err)
				}
				rf, err := banking.CreditorReference(order.PayReference)
				if err != nil {
					t.Fatal(err)
				}
				e.run(t, time.Minute)
				got := e.srv.Wait(t, 1)
				if len(got) != 1 || strings.Join(got[0].To, ",") != "alex.morgan@example.org" {
					t.Fatalf("%d messages, to %v", len(got), got[0].To)
				}
				h, parts := decoded(t, got[0].Data)
				subject, _ := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
				if !strings.HasPrefix(subject, tc.subject) {
					t.Errorf("subject %q", subject)
				}
				amount := order.Currency + " " + engine.FormatAmount(order.TotalMinor)
				checkTransferMail(t, parts, tc.kind, banking.Transfer{Creditor: tc.creditor, AmountMinor: order.TotalMinor, Currency: order.Currency, Reference: rf},
					append(tc.wants, amount, rf.String(), "https://portal.example/pay/"+order.PayReference))
				if strings.Contains(parts["text/plain"], tc.partly) {
					t.Errorf("a transfer nothing of which arrived says it is partly paid:\n%s", parts["text/plain"])
				}
				if n := len(e.srv.Received()); n != 1 {
					t.Fatalf("%d messages after the commit, want the one request", n)
				}

				// 20.00 arrives; on day 3 the reminder asks for the rest.
				paid := int64(2000)
				if res, err := payment.Of(demo.Svc).CapturePayment(ctx, payment.Capture{Reference: string(rf), AmountMinor: paid}); err != nil || res.Problem != "partial" {
					t.Fatalf("partial capture: %+v, %v", res, err)
				}
				for range 3 {
					e.run(t, 24*time.Hour)
				}
				got = e.srv.Wait(t, 2)
				_, parts = decoded(t, got[1].Data)
				rest := order.TotalMinor - paid
				checkTransferMail(t, parts, tc.kind, banking.Transfer{Creditor: tc.creditor, AmountMinor: rest, Currency: order.Currency, Reference: rf},
					[]string{order.Currency + " " + engine.FormatAmount(rest), rf.String(), tc.partly})
				if strings.Contains(parts["text/plain"], amount+"\n") {
					t.Errorf("the reminder asks for the whole total %s:\n%s", amount, parts["text/plain"])
				}
			})
		})
	}
}

// checkTransferMail checks a message asking for transfer: every want in
// the text part, the HTML part's image an inline PNG of the QR code of
// transfer, the HTML without English field labels outside English.
func checkTransferMail(t *testing.T, parts map[string]string, kind banking.QRKind, transfer banking.Transfer, wants []string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(parts["text/plain"], want) {
			t.Errorf("the text part lacks %q:\n%s", want, parts["text/plain"])
		}
	}
	for _, want := range []string{transfer.Creditor.IBAN.String(), transfer.Reference.String()} {
		if !strings.Contains(parts["text/html"], want) {
			t.Errorf("the HTML part lacks %q", want)
		}
	}
	m := regexp.MustCompile(`<img src="cid:([^"]+)"`).FindStringSubmatch(parts["text/html"])
	if m == nil {
		t.Fatalf("the HTML part shows no inline image:\n%s", parts["text/html"])
	}
	img, ok := parts["cid:"+m[1]]
	if !ok || !strings.HasPrefix(parts["cid-type:"+m[1]], "image/png") {
		t.Fatalf("no inline PNG part with Content-ID <%s> (parts %v)", m[1], keys(parts))
	}
	decodedImg, err := png.Decode(bytes.NewReader([]byte(img)))
	if err != nil {
		t.Fatalf("inline image: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(decodedImg)
	if err != nil {
		t.Fatal(err)
	}
	// PURE_BARCODE: the image is the code alone, as rendered. gozxing's
	// detector sometimes misreads the size of a QR-bill's code, whose
	// Swiss cross covers the centre alignment pattern; the modules and the
	// error correction are what this test is about.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_CHARACTER_SET: "UTF-8",
		gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode the mail's QR code: %v", err)
	}
	gotKind, want, err := transfer.Payload()
	if err != nil || gotKind != kind {
		t.Fatalf("payload %s: %v", gotKind, err)
	}
	if res.GetText() != want {
		t.Fatalf("the mail's QR code decodes to\n%q\nwant\n%q", res.GetText(), want)
	}
	// The payload itself carries the IBAN, the amount and the reference.
	for _, field := range []string{string(transfer.Creditor.IBAN), engine.FormatAmount(transfer.AmountMinor), string(transfer.Reference)} {
		if !strings.Contains(res.GetText(), field) {
			t.Errorf("the QR payload lacks %q: %q", field, res.GetText())
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
