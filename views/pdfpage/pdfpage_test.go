package pdfpage_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"portal/views/fonts"
	"portal/views/pdfpage"
)

var texts = []string{"Zoë Ørsted (Łukasz) \\ 100%", "Ελένη Наталья", "Ordinary text"}

func page(t *testing.T) []byte {
	t.Helper()
	regular, err := fonts.Cut(fonts.Regular, texts...)
	if err != nil {
		t.Fatal(err)
	}
	bold, err := fonts.Cut(fonts.Bold, texts...)
	if err != nil {
		t.Fatal(err)
	}
	p := pdfpage.New(100, 50)
	r, b := p.AddFont(regular), p.AddFont(bold)
	p.FillRect(0, 0, 100, 10, pdfpage.Colour{R: 31, G: 85, B: 112})
	p.FillRects([][4]float64{{60, 20, 5, 5}, {65, 20, 5, 5}}, pdfpage.Colour{})
	for i, s := range texts {
		p.Text(r, 10, pdfpage.Colour{}, 5, 20+float64(i)*6, s)
	}
	p.Text(b, 12, pdfpage.Colour{R: 255, G: 255, B: 255}, 5, 7, "Ordinary bold")
	p.Link(60, 20, 10, 5, "https://club.example/verify/a(b)c\\d")
	return p.Bytes(pdfpage.Info{Title: "Card – Zoë", Producer: "portal", Created: time.Date(2026, 12, 7, 8, 30, 0, 0, time.FixedZone("CET", 3600))})
}

// TestCrossReferencesPointAtObjects checks the file's structure as a strict
// reader walks it: startxref at the table, every entry at its object's
// header, /Size one beyond the last; then a PDF reader opens it and finds
// the texts (through each font's map back to Unicode) and the link.
func TestCrossReferencesPointAtObjects(t *testing.T) {
	b := page(t)
	if !bytes.Equal(b, page(t)) {
		t.Fatal("the same page gives different bytes")
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no startxref at the end")
	}
	at, _ := strconv.Atoi(string(m[1]))
	table := string(b[at:])
	if !strings.HasPrefix(table, "xref\n0 ") {
		t.Fatalf("startxref %d does not point at the table: %.20q", at, table)
	}
	lines := strings.Split(table, "\n")
	count, _ := strconv.Atoi(strings.Fields(lines[1])[1])
	if !strings.Contains(table, fmt.Sprintf("/Size %d ", count)) {
		t.Errorf("trailer's /Size is not %d", count)
	}
	for n := 1; n < count; n++ {
		entry := lines[2+n]
		if len(entry) != 19 || !strings.HasSuffix(entry, " 00000 n ") { // 20 bytes with the newline
			t.Fatalf("entry %d is %q", n, entry)
		}
		off, _ := strconv.Atoi(entry[:10])
		if header := fmt.Sprintf("%d 0 obj\n", n); !bytes.HasPrefix(b[off:], []byte(header)) {
			t.Fatalf("entry %d points at %.12q", n, b[off:])
		}
	}

	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, s := range r.Page(1).Content().Text {
		got.WriteString(s.S)
	}
	for _, want := range []string{"Zoë Ørsted (Łukasz) \\ 100%", "Ελένη Наталья", "Ordinary bold"} {
		if !strings.Contains(got.String(), want) {
			t.Errorf("text %q not read back from %q", want, got.String())
		}
	}
	if title := r.Trailer().Key("Info").Key("Title").Text(); title != "Card – Zoë" {
		t.Errorf("title %q", title)
	}
	if uri := r.Page(1).V.Key("Annots").Index(0).Key("A").Key("URI").RawString(); uri != "https://club.example/verify/a(b)c\\d" {
		t.Errorf("link %q", uri)
	}
	if created := r.Trailer().Key("Info").Key("CreationDate").RawString(); created != "D:20261207073000Z" {
		t.Errorf("creation date %q", created)
	}
}

// TestWidthIsTheFontsAdvances sets texts with the advances another parser
// (golang.org/x/image/font/sfnt) reads from the cut font file.
func TestWidthIsTheFontsAdvances(t *testing.T) {
	cut, err := fonts.Cut(fonts.Bold, texts...)
	if err != nil {
		t.Fatal(err)
	}
	f := pdfpage.New(10, 10).AddFont(cut)
	parsed, err := sfnt.Parse(cut.File)
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	for _, s := range append(texts, "∮ not in the cut") {
		var units fixed.Int26_6
		for _, c := range s {
			g, _ := parsed.GlyphIndex(&buf, c)
			a, err := parsed.GlyphAdvance(&buf, g, fixed.I(int(parsed.UnitsPerEm())), font.HintingNone)
			if err != nil {
				t.Fatal(err)
			}
			units += a
		}
		want := float64(units) / 64 / float64(parsed.UnitsPerEm()) * 12 * 25.4 / 72
		if got := f.Width(s, 12); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%q is %.4f mm wide, the font says %.4f", s, got, want)
		}
	}
}

// TestLinesKeepEveryWordWithinTheWidth breaks texts at many widths: no
// line is wider than asked unless it is one character, and the lines
// hold the words in order.
func TestLinesKeepEveryWordWithinTheWidth(t *testing.T) {
	long := "Maximilian-Alexander Theodor von Hohenzollern-Sigmaringen und Württemberg Donaudampfschifffahrtsgesellschaftskapitän"
	cut, err := fonts.Cut(fonts.Regular, long)
	if err != nil {
		t.Fatal(err)
	}
	f := pdfpage.New(10, 10).AddFont(cut)
	for _, s := range []string{long, "", "   ", "one", "  two  words  "} {
		for width := 2.0; width < 200; width *= 1.3 {
			lines := f.Lines(s, 12, width)
			for _, l := range lines {
				if f.Width(l, 12) > width && utf8.RuneCountInString(l) > 1 {
					t.Fatalf("%q at %.1f mm: line %q is %.1f mm", s, width, l, f.Width(l, 12))
				}
				if l == "" || strings.TrimSpace(l) != l {
					t.Fatalf("%q at %.1f mm: line %q", s, width, l)
				}
			}
			if got, want := strings.ReplaceAll(strings.Join(lines, ""), " ", ""), strings.ReplaceAll(s, " ", ""); got != want {
				t.Fatalf("%q at %.1f mm: lines %q", s, width, lines)
			}
			if f.Width(s, 12) <= width && len(lines) > 1 {
				t.Fatalf("%q fits %.1f mm but took %d lines", s, width, len(lines))
			}
		}
	}
}
