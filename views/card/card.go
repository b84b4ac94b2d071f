// Package card renders a membership card as a one-page PDF (views/pdfpage)
// with a QR code (code.go) that links to the card's
// public verification page. Output is deterministic: the same card gives
// the same bytes (fixed creation date, no random ids), so a message sent
// again carries an identical attachment.
package card

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"portal/views/fonts"
	"portal/views/pdfpage"
)

// Model is what a card shows.
type Model struct {
	Club      string
	Name      string
	Type      string // membership type name
	Period    string // the period's name
	ValidFrom time.Time
	ValidTo   time.Time
	// VerifyURL is the address the QR code holds.
	VerifyURL string
	// Issued dates the document (its creation date); fixed per card.
	Issued time.Time
	// Texts are the card's labels in the member's language; zero is English.
	Texts Texts
	// Dates is the validity as the member reads it ("1. März 2027 – …");
	// "" writes ValidFrom and ValidTo in English.
	Dates string
}

// Texts are the labels printed on a card.
type Texts struct {
	Title, Membership, Period, Valid, Scan string
}

// english are the labels of a card without Texts.
var english = Texts{Title: "Membership card", Membership: "Membership", Period: "Period", Valid: "Valid", Scan: "Scan to verify"}

// Render returns the card as a PDF of credit-card proportions (85.6 × 54 mm
// scaled up to 171.2 × 108 mm, easy to read on a phone and to print).
func Render(m Model) ([]byte, error) {
	if m.Texts == (Texts{}) {
		m.Texts = english
	}
	if m.Dates == "" {
		m.Dates = m.ValidFrom.Format("2 Jan 2006") + " – " + m.ValidTo.Format("2 Jan 2006")
	}
	for _, field := range []*string{&m.Club, &m.Name, &m.Type, &m.Period, &m.Dates} {
		*field = clean(*field)
	}
	texts := []string{m.Club, m.Name, m.Type, m.Period, m.Dates, m.Texts.Title, m.Texts.Membership, m.Texts.Period, m.Texts.Valid, m.Texts.Scan, ellipsis}
	regularCut, err := fonts.Cut(fonts.Regular, texts...)
	if err != nil {
		return nil, fmt.Errorf("card: %w", err)
	}
	boldCut, err := fonts.Cut(fonts.Bold, texts...)
	if err != nil {
		return nil, fmt.Errorf("card: %w", err)
	}
	page := pdfpage.New(width, height)
	regular, bold := page.AddFont(regularCut), page.AddFont(boldCut)

	// A band with the club's name, then the member on the left and the QR
	// code on the right.
	page.FillRect(0, 0, width, 24, brand)
	cell(page, bold, 16, white, 10, 6, 151, 8, m.Club, false)
	cell(page, regular, 10, white, 10, 14, 151, 6, m.Texts.Title, false)

	y := 34.0
	for _, line := range nameLines(bold, m.Name) {
		cell(page, bold, line.size, ink, 10, y, 100, line.height, line.text, false)
		y += line.height
	}
	y += 3
	rows := [][2]string{
		{m.Texts.Membership, m.Type},
		{m.Texts.Period, m.Period},
		{m.Texts.Valid, m.Dates},
	}
	for _, r := range rows {
		cell(page, regular, 9, ink, 10, y, 100, 5, r[0], false)
		cell(page, bold, 12, ink, 10, y+5, 100, 6, r[1], false)
		y += 13
	}

	code, err := encodeQR(m.VerifyURL)
	if err != nil {
		return nil, fmt.Errorf("card QR code: %w", err)
	}
	drawCode(page, code, 118, 32, 46)
	page.Link(118, 32, 46, 46, m.VerifyURL)
	cell(page, regular, 7, ink, 112, 80, 58, 4, m.Texts.Scan, true)

	return page.Bytes(pdfpage.Info{Title: strings.TrimSpace(clean(m.Texts.Title + " " + m.Name)), Producer: "portal", Created: m.Issued}), nil
}

// The card's size in millimetres, and its colours.
const (
	width, height = 171.2, 108
	// cellMargin is the space before a text inside its cell.
	cellMargin = 1.0
	ellipsis   = "…"
)

var (
	brand = pdfpage.Colour{R: 31, G: 85, B: 112} // brand-700
	white = pdfpage.Colour{R: 255, G: 255, B: 255}
	ink   = pdfpage.Colour{R: 30, G: 41, B: 59}
)

// cell prints s in a cell at (x, y), w × h millimetres, at size points:
// its baseline a little below the cell's middle, at the left (or in the
// middle when centred) after a margin. A text wider than the cell is set
// smaller until it fits, so that a long club's name stays on the card.
func cell(page *pdfpage.Page, f *pdfpage.Font, size float64, colour pdfpage.Colour, x, y, w, h float64, s string, centred bool) {
	room := w - 2*cellMargin
	if width := f.Width(s, size); width > room {
		size *= room / width
	}
	left := x + cellMargin
	if centred {
		left = x + (w-f.Width(s, size))/2
	}
	page.Text(f, size, colour, left, y+h/2+0.3*size*25.4/72, s)
}

// nameLine is a line of the member's name and the type it is set in.
type nameLine struct {
	text         string
	size, height float64 // points, millimetres
}

// nameLines sets the name in 18 points on up to two lines, else in 14 on
// up to three, the third ending in an ellipsis when more is left.
func nameLines(f *pdfpage.Font, name string) []nameLine {
	const room = 100 - 2*cellMargin
	size, height, most := 18.0, 8.0, 2
	lines := f.Lines(name, size, room)
	if len(lines) > most {
		size, height, most = 14, 6.5, 3
		lines = f.Lines(name, size, room)
	}
	if len(lines) > most {
		last := lines[most-1]
		for last != "" && f.Width(last+ellipsis, size) > room {
			_, n := utf8.DecodeLastRuneInString(last)
			last = last[:len(last)-n]
		}
		lines = append(lines[:most-1], last+ellipsis)
	}
	out := make([]nameLine, len(lines))
	for i, l := range lines {
		out[i] = nameLine{l, size, height}
	}
	return out
}

// drawCode draws the QR code's dark modules as filled rectangles of one
// path, at (x, y), size millimetres square. Vector modules stay sharp on
// any screen and printer, and cost no image: a 400-pixel PNG had been an
// eighth of a card's rendering time, and a season opening renders one
// card per member. One path filled once leaves no seams between modules
// where a viewer anti-aliases each shape's edges.
func drawCode(page *pdfpage.Page, code *qrCode, x, y, size float64) {
	module := size / float64(code.size)
	runs := darkRuns(code)
	rects := make([][4]float64, len(runs))
	for i, r := range runs {
		rects[i] = [4]float64{x + float64(r.from)*module, y + float64(r.row)*module, float64(r.to-r.from) * module, module}
	}
	page.FillRects(rects, pdfpage.Colour{})
}

// run is a row's dark modules from column from up to (not including) to.
type run struct{ row, from, to int }

// darkRuns is the code's dark modules as runs along each row: one
// rectangle a run rather than one a module.
func darkRuns(code *qrCode) []run {
	var runs []run
	for row := range code.size {
		for col := 0; col < code.size; {
			if !code.at(col, row) {
				col++
				continue
			}
			from := col
			for col < code.size && code.at(col, row) {
				col++
			}
			runs = append(runs, run{row, from, col})
		}
	}
	return runs
}

// clean is fonts.Clean: control characters and characters above U+FFFF
// (emoji, which DejaVu Sans lacks) are left out rather than printed as
// empty boxes.
func clean(s string) string { return fonts.Clean(s) }
