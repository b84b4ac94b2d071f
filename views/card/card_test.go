package card_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"portal/views/card"
)

func model() card.Model {
	return card.Model{Club: "Riverside Rowing Club", Name: "Zoë Ørsted-Łukasz 🚣", Type: "Adult", Period: "Season 2026/2027",
		ValidFrom: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), ValidTo: time.Date(2027, 10, 31, 0, 0, 0, 0, time.UTC),
		VerifyURL: "https://portal.example/verify/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", Issued: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

func TestRenderIsAStablePDF(t *testing.T) {
	a, err := card.Render(model()) // the emoji would make fpdf panic
	if err != nil {
		t.Fatal(err)
	}
	b, err := card.Render(model())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(a, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(a), []byte("%%EOF")) {
		t.Fatalf("not a PDF: %q...", a[:min(len(a), 20)])
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same card renders to different bytes")
	}
	if !bytes.Contains(a, []byte("/URI (https://portal.example/verify/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG)")) {
		t.Error("the card does not link to its verification page")
	}
	if !bytes.Contains(a, []byte("/CreationDate (D:20261123120000")) {
		t.Error("creation date is not the issue date")
	}
	other := model()
	other.Name = "Someone Else"
	c, _ := card.Render(other)
	if bytes.Equal(a, c) {
		t.Fatal("different cards render the same")
	}
	// The embedded font is a subset: a card stays small enough to attach.
	if len(a) > 200_000 {
		t.Errorf("card is %d bytes", len(a))
	}
}

// TestRenderFitsThePage reads the card back: a landscape page, every text
// on it, each inside the page (a card once came out portrait, its QR code
// and caption beyond the right edge).
func TestRenderFitsThePage(t *testing.T) {
	m := model()
	m.Name = "Zoë Ørsted-Łukasz Ελένη Наталья"
	b, err := card.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	page := r.Page(1)
	box := page.V.Key("MediaBox")
	for v := page.V; box.Len() < 4 && !v.IsNull(); v = v.Key("Parent") {
		box = v.Key("MediaBox") // inherited from the page tree
	}
	width, height := box.Index(2).Float64(), box.Index(3).Float64()
	if width <= height {
		t.Fatalf("the card is %.0f × %.0f pt: not landscape", width, height)
	}
	var text strings.Builder
	for _, s := range page.Content().Text {
		if s.X < 0 || s.X+s.W > width || s.Y < 0 || s.Y > height {
			t.Errorf("%q at (%.0f, %.0f) is outside the %.0f × %.0f page", s.S, s.X, s.Y, width, height)
		}
		text.WriteString(s.S)
	}
	// The reader decodes Latin-1 only; poppler's pdftotext reads the rest.
	for _, want := range []string{"Riverside Rowing Club", "Zoë Ørsted-", "Scan to verify"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the card's text lacks %q: %s", want, text.String())
		}
	}
}

// BenchmarkRender renders one card: a season opening sends one per
// member, some 20,000 for a federation's 10,000 households.
func BenchmarkRender(b *testing.B) {
	m := model()
	for b.Loop() {
		if _, err := card.Render(m); err != nil {
			b.Fatal(err)
		}
	}
}
