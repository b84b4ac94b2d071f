package members_test

import (
	"image"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/payment"
	"portal/handlers/handlertest"
)

// TestDonePageBankTransfer commits the demo registration with bank
// transfer and reads the done page as a member's phone would: the fields
// as text, and the QR code decoded from the page's own SVG, for a German
// account (EPC) and a Swiss one (QR-bill). The pay link shows the same
// transfer on the portal's own page instead of redirecting.
func TestDonePageBankTransfer(t *testing.T) {
	swissAddress := &banking.Address{Street: "Bahnhofstrasse", Number: "1", PostCode: "8001", Town: "Zürich", Country: "CH"}
	for _, tc := range []struct {
		name     string
		creditor banking.Creditor
		kind     banking.QRKind
	}{
		{"epc", banking.Creditor{Name: "TV Demo 1848 e.V.", IBAN: handlertest.MustIBAN(t, "DE89370400440532013000"), BIC: "COBADEFFXXX"}, banking.KindEPC},
		{"swiss", banking.Creditor{Name: "FC Demo Zürich", IBAN: handlertest.MustIBAN(t, "CH9300762011623852957"), Address: swissAddress}, banking.KindSwissQR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := handlertest.BankTransferEnv(t, tc.creditor)
			c := env.NewClient()
			f := env.CompleteDemo(c)
			if f.ProcessState != "DONE" || f.PaymentURL == nil {
				t.Fatalf("commit: %s, paymentUrl %v", f.ProcessState, f.PaymentURL)
			}
			var order engine.Order
			if err := env.DB.NewSelect().Model(&order).Where("status = ?", engine.OrderUnpaid).Scan(t.Context()); err != nil {
				t.Fatal(err)
			}
			rf, err := banking.CreditorReference(order.PayReference)
			if err != nil {
				t.Fatal(err)
			}
			kind, want, err := banking.Transfer{Creditor: tc.creditor, AmountMinor: order.TotalMinor, Currency: order.Currency, Reference: rf}.Payload()
			if err != nil || kind != tc.kind {
				t.Fatalf("payload %s: %v", kind, err)
			}
			// The payload is what the standard says, not merely what the
			// code made: the fields a banking app fills in.
			amount := engine.FormatAmount(order.TotalMinor)
			switch kind {
			case banking.KindEPC:
				if !strings.HasPrefix(want, "BCD\n002\n1\nSCT\nCOBADEFFXXX\nTV Demo 1848 e.V.\nDE89370400440532013000\nEUR"+amount+"\n\n"+string(rf)) {
					t.Fatalf("EPC payload %q", want)
				}
			case banking.KindSwissQR:
				want := strings.ReplaceAll(want, "\r\n", "\n") // the QR-bill separates with CR LF
				if !strings.HasPrefix(want, "SPC\n0200\n1\nCH9300762011623852957\nS\nFC Demo Zürich\nBahnhofstrasse\n1\n8001\nZürich\nCH\n") ||
					!strings.Contains(want, "\n"+amount+"\nEUR\n") || !strings.Contains(want, "\nSCOR\n"+string(rf)+"\n") {
					t.Fatalf("QR-bill payload %q", want)
				}
			}

			for _, path := range []string{"/membership/register/1/done", mustPath(t, *f.PaymentURL)} {
				p := env.Get(c, path)
				if p.Status != http.StatusOK {
					t.Fatalf("%s: %d", path, p.Status)
				}
				if p.TestID("bank-transfer").Length() != 1 || p.TestID("countdown").Length() != 0 {
					t.Fatalf("%s shows no bank transfer, or still redirects:\n%s", path, p.Body)
				}
				for key, text := range map[string]string{"creditor": tc.creditor.Name, "iban": tc.creditor.IBAN.String(),
					"amount": order.Currency + " " + amount, "reference": rf.String()} {
					if got := strings.TrimSpace(p.TestID("bank-transfer-" + key).Find(`[data-testid="value"]`).Text()); got != text {
						t.Errorf("%s: %s shows %q, want %q", path, key, got, text)
					}
				}
				svg := string(p.Body)
				start, end := strings.Index(svg, "<svg"), strings.Index(svg, "</svg>")
				if start < 0 || end < start {
					t.Fatalf("%s has no QR code", path)
				}
				if got := handlertest.DecodeQR(t, rasterise(t, svg[start:end+len("</svg>")])); got != want {
					t.Fatalf("%s: the QR code decodes to\n%q\nwant\n%q", path, got, want)
				}
			}
			// Part of it arrives: the pay link asks for the rest only, in
			// its fields and in its QR code, and says why.
			staff := engine.NewService(env.DB, &payment.TestGateway{})
			const part = 1000
			if res, err := payment.Of(staff).CapturePayment(t.Context(), payment.Capture{Reference: string(rf), AmountMinor: part}); err != nil || res.Problem != "partial" {
				t.Fatalf("partial capture: %+v, %v", res, err)
			}
			rest := order.TotalMinor - part
			_, wantRest, err := banking.Transfer{Creditor: tc.creditor, AmountMinor: rest, Currency: order.Currency, Reference: rf}.Payload()
			if err != nil {
				t.Fatal(err)
			}
			p := env.Get(c, mustPath(t, *f.PaymentURL))
			if got := strings.TrimSpace(p.TestID("bank-transfer-amount").Find(`[data-testid="value"]`).Text()); got != order.Currency+" "+engine.FormatAmount(rest) {
				t.Errorf("partly paid: the amount shows %q, want the rest %s", got, engine.FormatAmount(rest))
			}
			if p.TestID("bank-transfer-partly-paid").Length() != 1 {
				t.Error("partly paid: the page does not say part of it arrived")
			}
			svg := string(p.Body)
			start, end := strings.Index(svg, "<svg"), strings.Index(svg, "</svg>")
			if got := handlertest.DecodeQR(t, rasterise(t, svg[start:end+len("</svg>")])); got != wantRest {
				t.Fatalf("partly paid: the QR code decodes to\n%q\nwant\n%q", got, wantRest)
			}
			// The rest captured by staff: the registration completes, the pay link is a conflict.
			res, err := payment.Of(staff).CapturePayment(t.Context(), payment.Capture{Reference: string(rf), AmountMinor: rest})
			if err != nil || res.Outcome != engine.OutcomeSuccess || res.Problem != "" {
				t.Fatalf("capture: %+v, %v", res, err)
			}
			if r := env.Do(c, http.MethodGet, mustPath(t, *f.PaymentURL), nil); r.Status != http.StatusConflict {
				t.Errorf("pay link after the capture: %d, want 409", r.Status)
			}
		})
	}
}

func mustPath(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

var (
	svgRun   = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-\d+z`)
	svgRect  = regexp.MustCompile(`<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="(#fff|#000)"/>`)
	svgWidth = regexp.MustCompile(`viewBox="0 0 (\d+) \d+"`)
)

// rasterise paints the SVG engine/banking writes (a path of horizontal
// runs, then the Swiss cross's rectangles) at 6 pixels per module, as a
// screen would show it.
func rasterise(t *testing.T, svg string) image.Image {
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
	for _, r := range svgRect.FindAllStringSubmatch(svg, -1) {
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
