// Package pdfpage writes a one-page PDF of text, filled rectangles and
// links, with its fonts embedded as cut by fonts.Cut: what a membership
// card is. Longer documents (the year-end report, the mandate copy) use
// fpdf.
//
// Why a writer of its own for the card: a season opening renders one card
// per member, on the cores that answer the members' steps. fpdf names
// each UTF-8 font of each document by a SHA-1 of its JSON-encoded
// 65,536-entry width table and makes a new zlib compressor per stream;
// those were half of a card's CPU after the fonts were cut, and most of
// its garbage. Here a font is described by the cut itself (its glyphs and
// their advances), and compressors are reused.
//
// Positions are in millimetres from the page's top left corner, as on
// paper; sizes of type are in points. Output is deterministic: the same
// calls give the same bytes.
package pdfpage

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"portal/views/fonts"
)

// pointsPerMM converts millimetres to PDF points (1/72 inch).
const pointsPerMM = 72 / 25.4

// Colour is an RGB colour.
type Colour struct{ R, G, B uint8 }

// Page is one page being written.
type Page struct {
	width, height float64 // points
	content       bytes.Buffer
	fonts         []*Font
	links         []link
}

// link is a clickable area (points, PDF coordinates) opening uri.
type link struct {
	rect [4]float64
	uri  string
}

// Font is a cut font placed on a page.
type Font struct {
	cut      *fonts.Subsetted
	resource string // its name in the page's resources: F1, F2, ...
}

// New starts a page of width × height millimetres.
func New(width, height float64) *Page {
	return &Page{width: width * pointsPerMM, height: height * pointsPerMM}
}

// AddFont places cut on the page. Pass the cut of every text the page
// prints: a character not in it prints as the empty box (.notdef).
func (p *Page) AddFont(cut *fonts.Subsetted) *Font {
	f := &Font{cut: cut, resource: "F" + strconv.Itoa(len(p.fonts)+1)}
	p.fonts = append(p.fonts, f)
	return f
}

// glyph is c's glyph in the font, .notdef (0) when the cut lacks it.
func (f *Font) glyph(c rune) uint16 {
	g, _ := f.cut.Glyph(c)
	return g
}

// Width is how many millimetres s takes in f at size points.
func (f *Font) Width(s string, size float64) float64 {
	var units int
	for _, c := range s {
		units += f.cut.Advance(f.glyph(c))
	}
	return float64(units) / float64(f.cut.UnitsPerEm) * size / pointsPerMM
}

// Lines breaks s into lines of at most width millimetres in f at size
// points: at spaces, and inside a word only when the word alone is wider.
func (f *Font) Lines(s string, size, width float64) []string {
	var lines []string
	var line string
	// Breaks at spaces only: a no-break space (U+00A0) holds its words
	// together, as it should.
	for _, word := range strings.FieldsFunc(s, func(c rune) bool { return c == ' ' }) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if f.Width(try, size) <= width {
			line = try
			continue
		}
		if line != "" {
			lines = append(lines, line)
			line = ""
		}
		// The word alone: break it where it no longer fits.
		for f.Width(word, size) > width {
			cut := 0
			for i := range word {
				if i > 0 && f.Width(word[:i], size) > width {
					break
				}
				cut = i
			}
			if cut == 0 { // not even one character fits: give it a line
				_, cut = utf8.DecodeRuneInString(word)
			}
			lines = append(lines, word[:cut])
			word = word[cut:]
		}
		line = word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// FillRect fills the rectangle at (x, y), w × h millimetres, in colour.
func (p *Page) FillRect(x, y, w, h float64, colour Colour) {
	p.FillRects([][4]float64{{x, y, w, h}}, colour)
}

// FillRects fills rectangles (x, y, w, h in millimetres) as one path: a
// viewer anti-aliasing each shape's edges would show seams between
// touching rectangles drawn one by one.
func (p *Page) FillRects(rects [][4]float64, colour Colour) {
	if len(rects) == 0 {
		return
	}
	p.fillColour(colour)
	b := &p.content
	for _, r := range rects {
		x, y, w, h := r[0]*pointsPerMM, r[1]*pointsPerMM, r[2]*pointsPerMM, r[3]*pointsPerMM
		b.WriteString(num(x) + " " + num(p.height-y-h) + " " + num(w) + " " + num(h) + " re\n")
	}
	b.WriteString("f\n")
}

// Text prints s in f at size points, in colour, starting at x with its
// baseline at y (millimetres).
func (p *Page) Text(f *Font, size float64, colour Colour, x, y float64, s string) {
	if s == "" {
		return
	}
	b := &p.content
	b.WriteString("BT\n")
	p.fillColour(colour)
	fmt.Fprintf(b, "/%s %s Tf\n%s %s Td\n<", f.resource, num(size), num(x*pointsPerMM), num(p.height-y*pointsPerMM))
	var glyphs []byte
	for _, c := range s {
		glyphs = appendHex16(glyphs, f.glyph(c))
	}
	b.Write(glyphs)
	b.WriteString("> Tj\nET\n")
}

// Link makes the rectangle at (x, y), w × h millimetres, open uri.
func (p *Page) Link(x, y, w, h float64, uri string) {
	x, y, w, h = x*pointsPerMM, y*pointsPerMM, w*pointsPerMM, h*pointsPerMM
	p.links = append(p.links, link{rect: [4]float64{x, p.height - y - h, x + w, p.height - y}, uri: uri})
}

func (p *Page) fillColour(c Colour) {
	fmt.Fprintf(&p.content, "%s %s %s rg\n", num(float64(c.R)/255), num(float64(c.G)/255), num(float64(c.B)/255))
}

// Info is the document's information dictionary.
type Info struct {
	Title, Producer string
	// Created dates the document; the same date gives the same bytes.
	Created time.Time
}

// Bytes is the finished document.
func (p *Page) Bytes(info Info) []byte {
	w := &writer{}
	w.buf.Grow(16 << 10)
	w.buf.WriteString("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n")
	// Objects are numbered up front so that each can name those after it:
	// catalogue 1, pages 2, page 3, contents 4, info 5, five per font
	// from 6, then the links' annotations.
	const fontsFrom = 6
	linksFrom := fontsFrom + 5*len(p.fonts)

	w.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	w.object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	var page strings.Builder
	fmt.Fprintf(&page, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << /Font <<", num(p.width), num(p.height))
	for i, f := range p.fonts {
		fmt.Fprintf(&page, " /%s %d 0 R", f.resource, fontsFrom+5*i)
	}
	page.WriteString(" >> >> /Contents 4 0 R")
	if len(p.links) > 0 {
		page.WriteString(" /Annots [")
		for i := range p.links {
			fmt.Fprintf(&page, " %d 0 R", linksFrom+i)
		}
		page.WriteString(" ]")
	}
	page.WriteString(" >>")
	w.object(3, page.String())
	w.stream(4, "", deflate(p.content.Bytes()))
	w.object(5, fmt.Sprintf("<< /Title %s /Producer %s /CreationDate %s /ModDate %s >>",
		textString(info.Title), textString(info.Producer), date(info.Created), date(info.Created)))
	for i, f := range p.fonts {
		f.write(w, fontsFrom+5*i)
	}
	for i, l := range p.links {
		w.object(linksFrom+i, fmt.Sprintf("<< /Type /Annot /Subtype /Link /Rect [%s %s %s %s] /Border [0 0 0] /A << /S /URI /URI %s >> >>",
			num(l.rect[0]), num(l.rect[1]), num(l.rect[2]), num(l.rect[3]), literal(l.uri)))
	}
	w.finish(linksFrom + len(p.links))
	return w.buf.Bytes()
}

// write writes the font as five objects from n: the Type 0 font, its
// CID font, the descriptor, the font file and the map back to Unicode
// (which lets a reader copy and search the text). Character ids are the
// cut's glyph ids (Identity-H, CIDToGIDMap Identity).
func (f *Font) write(w *writer, n int) {
	o := objectsOf(f.cut)
	w.object(n, fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>", o.name, n+1, n+4))
	w.object(n+1, fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R %s /CIDToGIDMap /Identity >>", o.name, n+2, o.widths))
	w.object(n+2, fmt.Sprintf("<< /Type /FontDescriptor /FontName /%s %s /FontFile2 %d 0 R >>", o.name, o.descriptor, n+3))
	w.stream(n+3, fmt.Sprintf(" /Length1 %d", len(f.cut.File)), o.file)
	w.stream(n+4, "", o.toUnicode)
}

// fontObjects is what a cut becomes in a PDF, made once per cut and kept
// with it (fonts.Subsetted.Derived): the same characters give the same
// cut (fonts.Cut), and compressing its file was two fifths of a card.
type fontObjects struct {
	name               string // the subset's PostScript name
	widths, descriptor string // the CID font's and the descriptor's entries
	file, toUnicode    []byte // compressed
}

func objectsOf(c *fonts.Subsetted) *fontObjects {
	return c.Derived(func() any { return makeFontObjects(c) }).(*fontObjects)
}

func makeFontObjects(c *fonts.Subsetted) *fontObjects {
	units := func(v int) string { return strconv.Itoa(int(math.Round(float64(v) * 1000 / float64(c.UnitsPerEm)))) }
	// A subset's name carries a tag of six capitals, here from the file's
	// checksum: the same cut, the same name.
	sum := crc32.ChecksumIEEE(c.File)
	var tag [6]byte
	for i := range tag {
		tag[i] = 'A' + byte(sum%26)
		sum /= 26
	}
	o := &fontObjects{name: string(tag[:]) + "+" + c.PostScriptName}
	if c.PostScriptName == "" {
		o.name = string(tag[:]) + "+Font"
	}

	var widths strings.Builder
	widths.WriteString("/DW " + units(c.Advance(0)) + " /W [0 [")
	for g := range c.Glyphs() {
		if g > 0 {
			widths.WriteByte(' ')
		}
		widths.WriteString(units(c.Advance(uint16(g))))
	}
	widths.WriteString("]]")
	o.widths = widths.String()

	flags := 32 // non-symbolic
	if c.ItalicAngle != 0 {
		flags |= 64
	}
	// StemV as fpdf estimates it from the weight class.
	stemV := 50 + int(math.Pow(float64(c.Weight)/65, 2))
	o.descriptor = fmt.Sprintf("/Flags %d /FontBBox [%s %s %s %s] /ItalicAngle %s /Ascent %s /Descent %s /CapHeight %s /StemV %d /MissingWidth %s",
		flags, units(c.BBox[0]), units(c.BBox[1]), units(c.BBox[2]), units(c.BBox[3]), num(c.ItalicAngle),
		units(c.Ascent), units(c.Descent), units(c.CapHeight), stemV, units(c.Advance(0)))
	o.file = deflate(c.File)
	o.toUnicode = deflate(toUnicode(c))
	return o
}

// toUnicode is the CMap from the cut's glyphs to the characters they
// print, in blocks of at most 100 as the format allows.
func toUnicode(c *fonts.Subsetted) []byte {
	var pairs []string
	for g := range c.Glyphs() {
		r := c.Char(uint16(g))
		if r == 0 {
			continue
		}
		pair := append(appendHex16([]byte{'<'}, uint16(g)), "> <"...)
		for _, u := range utf16.Encode([]rune{r}) {
			pair = appendHex16(pair, u)
		}
		pairs = append(pairs, string(append(pair, '>')))
	}
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	for len(pairs) > 0 {
		n := min(len(pairs), 100)
		fmt.Fprintf(&b, "%d beginbfchar\n%s\nendbfchar\n", n, strings.Join(pairs[:n], "\n"))
		pairs = pairs[n:]
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.Bytes()
}

// writer lays out numbered objects and the cross-reference table that
// gives each one's byte offset.
type writer struct {
	buf     bytes.Buffer
	offsets []int // by object number; 0 is the free list's head
}

func (w *writer) begin(n int) {
	for len(w.offsets) <= n {
		w.offsets = append(w.offsets, 0)
	}
	w.offsets[n] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n", n)
}

func (w *writer) object(n int, body string) {
	w.begin(n)
	w.buf.WriteString(body)
	w.buf.WriteString("\nendobj\n")
}

// deflaters are zlib writers kept for the next stream: a new one
// allocates some 800 kB of compressor state.
var deflaters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// deflate compresses data as a FlateDecode stream holds it.
func deflate(data []byte) []byte {
	var packed bytes.Buffer
	packed.Grow(len(data)/2 + 64)
	z := deflaters.Get().(*zlib.Writer)
	z.Reset(&packed)
	z.Write(data) // writes to a bytes.Buffer do not fail
	z.Close()
	deflaters.Put(z)
	return packed.Bytes()
}

// stream writes packed (deflated) as object n; extra goes into its
// dictionary.
func (w *writer) stream(n int, extra string, packed []byte) {
	w.begin(n)
	fmt.Fprintf(&w.buf, "<< /Length %d /Filter /FlateDecode%s >>\nstream\n", len(packed), extra)
	w.buf.Write(packed)
	w.buf.WriteString("\nendstream\nendobj\n")
}

// finish writes the cross-reference table and the trailer for objects
// 1 to last-1.
func (w *writer) finish(last int) {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", last)
	for n := 1; n < last; n++ {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", w.offsets[n])
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root 1 0 R /Info 5 0 R >>\nstartxref\n%d\n%%%%EOF\n", last, xref)
}

// num writes v with at most three decimals and no trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// literal is s as a PDF literal string: delimiters and the escape
// character escaped, bytes outside printable ASCII written in octal.
func literal(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(' || c == ')' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7E:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// textString is s as a PDF text string: a literal when it is printable
// ASCII, else UTF-16 with its byte order mark, in hex.
func textString(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			ascii = false
			break
		}
	}
	if ascii {
		return literal(s)
	}
	b := []byte("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		b = appendHex16(b, u)
	}
	return string(append(b, '>'))
}

// appendHex16 appends v as four hexadecimal digits: a glyph id, or a
// UTF-16 unit, as PDF's hex strings and CMaps write them.
func appendHex16(b []byte, v uint16) []byte {
	const digits = "0123456789ABCDEF"
	return append(b, digits[v>>12], digits[v>>8&0xF], digits[v>>4&0xF], digits[v&0xF])
}

// date is t as a PDF date in UTC.
func date(t time.Time) string {
	return "(D:" + t.UTC().Format("20060102150405") + "Z)"
}
