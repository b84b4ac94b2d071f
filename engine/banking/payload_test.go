package banking

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

func mustIBAN(t *testing.T, s string) IBAN {
	t.Helper()
	i, err := ParseIBAN(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func epcTransfer(t *testing.T) Transfer {
	return Transfer{
		Creditor:    Creditor{Name: "Turnverein Köln 1848 e.V.", IBAN: mustIBAN(t, "DE89370400440532013000"), BIC: "COBADEFFXXX"},
		AmountMinor: 18450, Currency: "EUR", Reference: "RF18539007547034",
	}
}

func swissTransfer(t *testing.T) Transfer {
	return Transfer{
		Creditor: Creditor{Name: "Robert Schneider AG", IBAN: mustIBAN(t, "CH9300762011623852957"),
			Address: &Address{Street: "Rue du Lac", Number: "1268", PostCode: "2501", Town: "Biel", Country: "CH"}},
		AmountMinor: 199995, Currency: "CHF", Reference: "RF18539007547034",
	}
}

func TestEPCPayload(t *testing.T) {
	p, err := EPCPayload(epcTransfer(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "BCD\n002\n1\nSCT\nCOBADEFFXXX\nTurnverein Köln 1848 e.V.\nDE89370400440532013000\nEUR184.50\n\nRF18539007547034"
	if p != want {
		t.Fatalf("payload\n%q\nwant\n%q", p, want)
	}
	noBIC := epcTransfer(t)
	noBIC.Creditor.BIC = ""
	noBIC.AmountMinor = 5
	if p, err := EPCPayload(noBIC); err != nil || strings.Split(p, "\n")[4] != "" || strings.Split(p, "\n")[7] != "EUR0.05" {
		t.Fatalf("without BIC: %q, %v", p, err)
	}
}

func TestEPCPayloadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		change     func(*Transfer)
	}{
		{"CHF", "currency", func(tr *Transfer) { tr.Currency = "CHF" }},
		{"no name", "creditor name: is required", func(tr *Transfer) { tr.Creditor.Name = "" }},
		{"long name", "at most 70", func(tr *Transfer) { tr.Creditor.Name = strings.Repeat("ä", 71) }},
		{"line break in name", "line breaks", func(tr *Transfer) { tr.Creditor.Name = "Club\nEUR1.00" }},
		{"bad BIC", "BIC", func(tr *Transfer) { tr.Creditor.BIC = "COBA" }},
		{"zero amount", "amount", func(tr *Transfer) { tr.AmountMinor = 0 }},
		{"too much", "amount", func(tr *Transfer) { tr.AmountMinor = 100000000000 }},
		{"bad IBAN", "IBAN", func(tr *Transfer) { tr.Creditor.IBAN = "DE88370400440532013000" }},
		{"bad reference", "reference", func(tr *Transfer) { tr.Reference = "RF19539007547034" }},
		{"spaced reference", "reference", func(tr *Transfer) { tr.Reference = "RF18 5390 0754 7034" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := epcTransfer(t)
			tc.change(&tr)
			p, err := EPCPayload(tr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EPCPayload = %q, %v; want an error about %q", p, err, tc.want)
			}
		})
	}
	// The name's limit counts characters, the payload's counts bytes: 70
	// letters fit, 70 four-byte characters do not.
	tr := epcTransfer(t)
	tr.Creditor.Name = strings.Repeat("Ä", 70)
	if _, err := EPCPayload(tr); err != nil {
		t.Fatalf("70 two-byte letters: %v", err)
	}
	tr.Creditor.Name = strings.Repeat("𝄞", 70)
	if _, err := EPCPayload(tr); err == nil || !strings.Contains(err.Error(), "331") {
		t.Fatalf("70 four-byte characters: %v, want the 331-byte limit", err)
	}
}

func TestSwissQRPayload(t *testing.T) {
	p, err := SwissQRPayload(swissTransfer(t))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"SPC", "0200", "1", "CH9300762011623852957",
		"S", "Robert Schneider AG", "Rue du Lac", "1268", "2501", "Biel", "CH",
		"", "", "", "", "", "", "",
		"1999.95", "CHF",
		"", "", "", "", "", "", "",
		"SCOR", "RF18539007547034", "", "EPD"}, "\r\n")
	if p != want {
		t.Fatalf("payload\n%q\nwant\n%q", p, want)
	}
	if n := strings.Count(p, "\r\n") + 1; n != 31 {
		t.Fatalf("%d elements, the QR-bill has 31 up to the trailer", n)
	}
	eur := swissTransfer(t)
	eur.Currency, eur.AmountMinor = "EUR", 100
	if p, err := SwissQRPayload(eur); err != nil || !strings.Contains(p, "\r\n1.00\r\nEUR\r\n") {
		t.Fatalf("EUR QR-bill: %q, %v", p, err)
	}
}

func TestSwissQRPayloadRejects(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		change     func(*Transfer)
	}{
		{"QR-IBAN with RF", "QR-IBAN", func(tr *Transfer) { tr.Creditor.IBAN = mustIBAN(t, "CH4431999123000889012") }},
		{"German IBAN", "CH or LI", func(tr *Transfer) { tr.Creditor.IBAN = mustIBAN(t, "DE89370400440532013000") }},
		{"no address", "structured address", func(tr *Transfer) { tr.Creditor.Address = nil }},
		{"no town", "creditor address town: is required", func(tr *Transfer) { tr.Creditor.Address.Town = "" }},
		{"long town", "at most 35", func(tr *Transfer) { tr.Creditor.Address.Town = strings.Repeat("x", 36) }},
		{"bad country", "ISO 3166", func(tr *Transfer) { tr.Creditor.Address.Country = "Schweiz" }},
		{"Cyrillic name", "creditor name: holds 'Ф'", func(tr *Transfer) { tr.Creditor.Name = "ФК Жуков" }},
		{"emoji in town", "creditor address town: holds", func(tr *Transfer) { tr.Creditor.Address.Town = "Biel ⚽" }},
		{"USD", "CHF or EUR", func(tr *Transfer) { tr.Currency = "USD" }},
		{"negative", "amount", func(tr *Transfer) { tr.AmountMinor = -100 }},
		{"no reference", "reference", func(tr *Transfer) { tr.Reference = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := swissTransfer(t)
			a := *tr.Creditor.Address
			tr.Creditor.Address = &a
			tc.change(&tr)
			if p, err := SwissQRPayload(tr); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("SwissQRPayload = %q, %v; want an error about %q", p, err, tc.want)
			}
		})
	}
}

func TestPayloadPicksTheStandard(t *testing.T) {
	if k, _, err := epcTransfer(t).Payload(); err != nil || k != KindEPC {
		t.Fatalf("German EUR account: %q, %v", k, err)
	}
	if k, _, err := swissTransfer(t).Payload(); err != nil || k != KindSwissQR {
		t.Fatalf("Swiss CHF account: %q, %v", k, err)
	}
	tr := epcTransfer(t)
	tr.Currency = "CHF"
	if _, _, err := tr.Payload(); err == nil {
		t.Fatal("CHF to a German account: want an error")
	}
}

// decode reads a QR code back the way a phone does, from pixels.
func decode(t *testing.T, img image.Image) string {
	t.Helper()
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_CHARACTER_SET: "UTF-8"}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, hints)
	if err != nil {
		t.Fatalf("decode QR: %v", err)
	}
	// Both standards prescribe error correction level M.
	if ec := fmt.Sprint(res.GetResultMetadata()[gozxing.ResultMetadataType_ERROR_CORRECTION_LEVEL]); ec != "M" {
		t.Errorf("error correction level %s, want M", ec)
	}
	return res.GetText()
}

func TestQRCodesScan(t *testing.T) {
	for name, tr := range map[string]Transfer{"epc": epcTransfer(t), "swiss": swissTransfer(t)} {
		t.Run(name, func(t *testing.T) {
			code, err := tr.QRCode()
			if err != nil {
				t.Fatal(err)
			}
			_, want, _ := tr.Payload()
			b, err := code.PNG(4)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got := decode(t, img); got != want {
				t.Fatalf("PNG decodes to\n%q\nwant\n%q", got, want)
			}
			svg := code.SVG("Payment code")
			if got := decode(t, rasterise(t, svg, code.Kind == KindSwissQR)); got != want {
				t.Fatalf("SVG decodes to\n%q\nwant\n%q", got, want)
			}
			if !strings.Contains(svg, `role="img" aria-label="Payment code"`) || !strings.Contains(svg, "<title>Payment code</title>") {
				t.Errorf("SVG has no accessible name: %.200s", svg)
			}
			if hasCross := strings.Contains(svg, "data-swiss-cross"); hasCross != (code.Kind == KindSwissQR) {
				t.Errorf("Swiss cross present = %v for %s", hasCross, code.Kind)
			}
		})
	}
}

var (
	svgRun   = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-\d+z`)
	svgRect  = regexp.MustCompile(`<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#fff|#000)"/>`)
	svgWidth = regexp.MustCompile(`viewBox="0 0 (\d+) \d+"`)
)

// rasterise paints the SVG this package writes (a path of horizontal runs,
// then the cross's rectangles) at 6 pixels per module, so that the test
// scans the SVG's own geometry rather than the symbol it came from.
func rasterise(t *testing.T, svg string, cross bool) image.Image {
	t.Helper()
	const scale = 6
	m := svgWidth.FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("SVG without viewBox")
	}
	w, _ := strconv.Atoi(m[1])
	img := image.NewGray(image.Rect(0, 0, w*scale, w*scale))
	fill := func(x0, y0, x1, y1 float64, v uint8) {
		for y := int(y0*scale + 0.5); y < int(y1*scale+0.5); y++ {
			for x := int(x0*scale + 0.5); x < int(x1*scale+0.5); x++ {
				img.Pix[y*img.Stride+x] = v
			}
		}
	}
	fill(0, 0, float64(w), float64(w), 0xff)
	for _, r := range svgRun.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(r[1], 64)
		y, _ := strconv.ParseFloat(r[2], 64)
		n, _ := strconv.ParseFloat(r[3], 64)
		fill(x, y, x+n, y+1, 0)
	}
	rects := svgRect.FindAllStringSubmatch(svg, -1)
	if cross && len(rects) != 4 {
		t.Fatalf("want the cross's 4 rectangles, got %d", len(rects))
	}
	for _, r := range rects {
		f := make([]float64, 4)
		for i := range f {
			f[i], _ = strconv.ParseFloat(r[i+1], 64)
		}
		v := uint8(0)
		if r[5] == "#fff" {
			v = 0xff
		}
		fill(f[0], f[1], f[0]+f[2], f[1]+f[3], v)
	}
	return img
}

func TestCreditorValidate(t *testing.T) {
	if err := epcTransfer(t).Creditor.Validate(); err != nil {
		t.Fatalf("German creditor: %v", err)
	}
	if err := swissTransfer(t).Creditor.Validate(); err != nil {
		t.Fatalf("Swiss creditor: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		c          Creditor
	}{
		{"empty", "creditor name: is required", Creditor{}},
		{"bad IBAN", "IBAN: \"DE88370400440532013000\": check digits", Creditor{Name: "Club", IBAN: "DE88370400440532013000"}},
		{"bad BIC", "BIC", Creditor{Name: "Club", IBAN: "DE89370400440532013000", BIC: "X"}},
		{"Swiss without address", "creditor address: is required for a CH account", Creditor{Name: "Club", IBAN: "CH9300762011623852957"}},
		{"Swiss account, Greek name", "creditor name: holds", Creditor{Name: "Ομάδα", IBAN: "CH9300762011623852957", Address: swissTransfer(t).Creditor.Address}},
		{"QR-IBAN", "QR-IBAN", Creditor{Name: "Club", IBAN: "CH4431999123000889012", Address: swissTransfer(t).Creditor.Address}},
		{"bad address", "creditor address postcode: is required", Creditor{Name: "Club", IBAN: "DE89370400440532013000", Address: &Address{Street: "A", Town: "B", Country: "DE"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestParseAddress(t *testing.T) {
	a, err := ParseAddress(" Bahnhofstrasse ; 1 ; 8001 ; Zürich ; ch ")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Address{"Bahnhofstrasse", "1", "8001", "Zürich", "CH"}); a != want || a.String() != "Bahnhofstrasse;1;8001;Zürich;CH" {
		t.Fatalf("got %+v (%s)", a, a)
	}
	if a, err := ParseAddress("Dorfplatz;;9490;Vaduz;LI"); err != nil || a.Number != "" {
		t.Fatalf("no number: %+v, %v", a, err)
	}
	for _, bad := range []string{"", "Bahnhofstrasse 1, 8001 Zürich", "a;1;2;b;Schweiz", ";1;8001;Zürich;CH", "a;1;2;b;CH;extra"} {
		if _, err := ParseAddress(bad); err == nil {
			t.Errorf("ParseAddress(%q): want an error", bad)
		}
	}
}
