package card_test

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
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
	long := model()
	long.Club = "Turn- und Sportverein Großostheim-Ringheim von 1892 e.V., Abteilung Schwimmen und Wasserball"
	long.Name = "Maximilian-Alexander Theodor Friedrich von Hohenzollern-Sigmaringen und Württemberg-Teck zu Großostheim"
	long.Type = "Erwachsene mit Familienermäßigung und Hallenbadnutzung ganzjährig"
	international := model()
	international.Name = "Zoë Ørsted-Łukasz Ελένη Наталья"
	for _, m := range []card.Model{international, long} {
		fitsThePage(t, m)
	}
}

// fitsThePage renders m and checks that its page is landscape and that
// every text lies on it: the club's name and the rows are set smaller,
// the member's name on up to three lines, until they fit.
func fitsThePage(t *testing.T, m card.Model) {
	t.Helper()
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
	// The QR code, in points from the page's bottom left: 46 mm square at
	// 118 mm from the left and 32 mm from the top.
	const mm = 72 / 25.4
	codeLeft, codeBottom, codeTop := 118*mm, height-(32+46)*mm, height-32*mm
	runs := textRuns(t, page)
	if len(runs) < 10 {
		t.Fatalf("%d texts on the card", len(runs))
	}
	for _, r := range runs {
		if r.left < 0 || r.right > width || r.baseline < 0 || r.baseline > height {
			t.Errorf("%d glyphs from (%.0f, %.0f) to %.0f leave the %.0f × %.0f page", r.glyphs, r.left, r.baseline, r.right, width, height)
		}
		if r.left < codeLeft && r.right > codeLeft && r.baseline > codeBottom && r.baseline < codeTop {
			t.Errorf("%d glyphs from (%.0f, %.0f) to %.0f run into the QR code", r.glyphs, r.left, r.baseline, r.right)
		}
	}
	var text strings.Builder
	for _, s := range page.Content().Text {
		text.WriteString(s.S)
	}
	// The reader decodes Latin-1 only; poppler's pdftotext reads the rest.
	for _, want := range []string{m.Club[:20], m.Name[:11], "Scan to verify"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the card's text lacks %q: %s", want, text.String())
		}
	}
}

// textRun is where a text shown at once lies on the page, in points.
type textRun struct {
	left, right, baseline float64
	glyphs                int
}

// textRuns reads the page's content stream and places each text shown
// with the advances the file gives its glyphs (the CID fonts' W arrays):
// what a viewer draws. The reader's own positions do not advance through
// CID fonts. The card writes each text as its own BT … Td … Tj … ET.
func textRuns(t *testing.T, page pdf.Page) []textRun {
	t.Helper()
	advances := map[string]map[int]float64{} // by font resource, glyph: per 1,000 of the size
	fonts := page.V.Key("Resources").Key("Font")
	for _, name := range fonts.Keys() {
		w := fonts.Key(name).Key("DescendantFonts").Index(0).Key("W")
		advances[name] = map[int]float64{}
		for i := 0; i+1 < w.Len(); i += 2 {
			first, widths := int(w.Index(i).Int64()), w.Index(i+1)
			for j := range widths.Len() {
				advances[name][first+j] = widths.Index(j).Float64()
			}
		}
	}
	content, err := io.ReadAll(page.V.Key("Contents").Reader())
	if err != nil {
		t.Fatal(err)
	}
	var runs []textRun
	var operands []string
	var font string
	var size, x, y float64
	number := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("operand %q: %v", s, err)
		}
		return v
	}
	for _, token := range strings.Fields(string(content)) {
		switch token {
		case "Tf":
			font, size = strings.TrimPrefix(operands[0], "/"), number(operands[1])
		case "Td":
			x, y = number(operands[0]), number(operands[1])
		case "Tj":
			hex := strings.Trim(operands[0], "<>")
			run := textRun{left: x, right: x, baseline: y}
			for i := 0; i+4 <= len(hex); i += 4 {
				g, err := strconv.ParseUint(hex[i:i+4], 16, 16)
				if err != nil {
					t.Fatal(err)
				}
				w, ok := advances[font][int(g)]
				if !ok {
					t.Fatalf("glyph %d of %s has no width", g, font)
				}
				run.right += w / 1000 * size
				run.glyphs++
			}
			runs = append(runs, run)
		}
		if len(token) > 0 && (token[0] >= 'a' && token[0] <= 'z' || token[0] >= 'A' && token[0] <= 'Z') {
			operands = operands[:0]
		} else {
			operands = append(operands, token)
		}
	}
	return runs
}

// TestRenderAtOnce renders cards on many goroutines at once, as the job
// workers do, from cold: 80 names of different characters, so that most
// need font cuts of their own (two a card, 160: more than fonts.Cut
// keeps) and kept cuts are dropped and made again meanwhile. Each card
// must come out as it does when rendered again alone (run with -race to
// check the sharing).
func TestRenderAtOnce(t *testing.T) {
	names := make([]string, 80)
	for i := range names {
		names[i] = "Test " + string(rune(0x0410+i%32)) + string(rune(0x03B1+i/32)) + " Ørsted"
	}
	cards := make([][]byte, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			m := model()
			m.Name = n
			b, err := card.Render(m)
			if err != nil {
				t.Error(err)
			}
			cards[i] = b
		})
	}
	wg.Wait()
	for i, n := range names {
		m := model()
		m.Name = n
		b, err := card.Render(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, cards[i]) {
			t.Fatalf("%s's card rendered at once differs from the one rendered alone", n)
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
