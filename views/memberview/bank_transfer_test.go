package memberview_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"portal/engine/banking"
	"portal/views"
	"portal/views/memberview"
)

// model builds the view model as the bank_transfer provider will: from
// engine/banking's types, with the real QR code.
func model(t *testing.T, bic string, interactive bool) views.BankTransferModel {
	t.Helper()
	iban, err := banking.ParseIBAN("DE89370400440532013000")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := banking.CreditorReference("PR-ALPHA2345ALPHA234")
	if err != nil {
		t.Fatal(err)
	}
	tr := banking.Transfer{Creditor: banking.Creditor{Name: "TV <Köln> 1848 e.V.", IBAN: iban, BIC: bic}, AmountMinor: 18450, Currency: "EUR", Reference: ref}
	code, err := tr.QRCode()
	if err != nil {
		t.Fatal(err)
	}
	return views.BankTransferModel{
		Creditor: tr.Creditor.Name, IBAN: iban.String(), IBANCompact: string(iban), BIC: bic,
		Amount: "184.50", Currency: "EUR", Reference: ref.String(), ReferenceCompact: string(ref),
		QRSVG: code.SVG("QR code of this bank transfer"), QRName: "QR code of this bank transfer", Interactive: interactive,
	}
}

func render(t *testing.T, m views.BankTransferModel) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := memberview.BankTransfer(m).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestBankTransferFields(t *testing.T) {
	doc := render(t, model(t, "COBADEFFXXX", true))
	sec := doc.Find(`[data-testid="bank-transfer"]`)
	if sec.Length() != 1 {
		t.Fatal("no bank-transfer section")
	}
	want := []struct{ key, label, shown, copy string }{
		{"creditor", "Account holder", "TV <Köln> 1848 e.V.", "TV <Köln> 1848 e.V."},
		{"iban", "IBAN", "DE89 3704 0044 0532 0130 00", "DE89370400440532013000"},
		{"bic", "BIC", "COBADEFFXXX", "COBADEFFXXX"},
		{"amount", "Amount", "EUR 184.50", "184.50"},
		{"reference", "Reference", "RF48 PRAL PHA2 345A LPHA 234", "RF48PRALPHA2345ALPHA234"},
	}
	rows := sec.Find("dl > div")
	if rows.Length() != len(want) {
		t.Fatalf("%d rows, want %d", rows.Length(), len(want))
	}
	rows.Each(func(i int, row *goquery.Selection) {
		w := want[i]
		if id, _ := row.Attr("data-testid"); id != "bank-transfer-"+w.key {
			t.Errorf("row %d is %q, want bank-transfer-%s", i, id, w.key)
		}
		if got := strings.TrimSpace(row.Find("dt").Text()); got != w.label {
			t.Errorf("%s label %q, want %q", w.key, got, w.label)
		}
		value := row.Find(`[data-testid="value"]`)
		if got := value.Text(); got != w.shown || !value.HasClass("select-all") {
			t.Errorf("%s shows %q (select-all %v), want %q", w.key, got, value.HasClass("select-all"), w.shown)
		}
		btn := row.Find(`button[data-testid="copy"]`)
		if c, _ := btn.Attr("data-copy"); c != w.copy {
			t.Errorf("%s copies %q, want %q", w.key, c, w.copy)
		}
		// Hidden until app.js knows the clipboard works; named by its field.
		if _, hidden := btn.Attr("hidden"); !hidden || btn.AttrOr("type", "") != "button" {
			t.Errorf("%s copy button: hidden %v, type %q", w.key, hidden, btn.AttrOr("type", ""))
		}
		if got := strings.Join(strings.Fields(btn.Text()), " "); got != "Copy "+w.label {
			t.Errorf("%s button's name %q, want %q", w.key, got, "Copy "+w.label)
		}
	})
	if sec.Find("[aria-live][data-copy-status]").Length() != 1 {
		t.Error("no live region for the copy status")
	}
	svg := sec.Find(`[data-testid="bank-transfer-qr"] svg`)
	if svg.Length() != 1 || svg.AttrOr("role", "") != "img" || svg.AttrOr("aria-label", "") != "QR code of this bank transfer" {
		t.Fatalf("QR SVG missing or without an accessible name: %d, role %q, label %q", svg.Length(), svg.AttrOr("role", ""), svg.AttrOr("aria-label", ""))
	}
	if sec.Find("figcaption").Length() != 1 || sec.Find(`[data-testid="bank-transfer-reference-hint"]`).Length() != 1 {
		t.Error("caption or reference hint missing")
	}
}

func TestBankTransferEscapes(t *testing.T) {
	var buf bytes.Buffer
	if err := memberview.BankTransfer(model(t, "", true)).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<Köln>") {
		t.Fatal("the creditor name reached the page unescaped")
	}
}

func TestBankTransferWithoutBIC(t *testing.T) {
	doc := render(t, model(t, "", true))
	if doc.Find(`[data-testid="bank-transfer-bic"]`).Length() != 0 {
		t.Fatal("an empty BIC is printed")
	}
	if n := doc.Find("dl > div").Length(); n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
}

// E-mails: no buttons nor live region (no script runs there), and the PNG
// as an image with its alternative text, since mail clients drop inline SVG.
func TestBankTransferForEmail(t *testing.T) {
	m := model(t, "", false)
	m.QRImageURL = "cid:transfer-qr"
	doc := render(t, m)
	if n := doc.Find("button, [aria-live]").Length(); n != 0 {
		t.Fatalf("%d buttons or live regions in the e-mail version", n)
	}
	img := doc.Find(`[data-testid="bank-transfer-qr"] img`)
	if img.AttrOr("src", "") != "cid:transfer-qr" || img.AttrOr("alt", "") != "QR code of this bank transfer" || doc.Find("svg").Length() != 0 {
		t.Fatalf("img src %q alt %q, svg %d", img.AttrOr("src", ""), img.AttrOr("alt", ""), doc.Find("svg").Length())
	}
	if got := doc.Find(`[data-testid="bank-transfer-iban"] [data-testid="value"]`).Text(); got != "DE89 3704 0044 0532 0130 00" {
		t.Fatalf("IBAN %q", got)
	}
}
