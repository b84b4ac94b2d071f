// Package card renders a membership card as a PDF (codeberg.org/go-pdf/fpdf)
// with a QR code (github.com/boombuler/barcode) that links to the card's
// public verification page. Output is deterministic: the same card gives
// the same bytes (fixed creation date, no random ids), so a message sent
// again carries an identical attachment.
package card

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/boombuler/barcode/qr"

	"portal/views/fonts"
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
	// "P" keeps the size as given (wider than tall); fpdf's "L" swaps the
	// two sides, which had put the QR code beyond the page's right edge.
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: 171.2, Ht: 108}, OrientationStr: "P"})
	pdf.SetCreationDate(m.Issued.UTC())
	pdf.SetModificationDate(m.Issued.UTC())
	pdf.SetCatalogSort(true)
	pdf.SetProducer("portal", true)
	if m.Texts == (Texts{}) {
		m.Texts = english
	}
	if m.Dates == "" {
		m.Dates = m.ValidFrom.Format("2 Jan 2006") + " – " + m.ValidTo.Format("2 Jan 2006")
	}
	pdf.SetTitle(clean(m.Texts.Title+" "+m.Name), true)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	if err := fonts.Add(pdf, m.Club, m.Name, m.Type, m.Period, m.Dates, m.Texts.Title, m.Texts.Membership, m.Texts.Period, m.Texts.Valid, m.Texts.Scan); err != nil {
		return nil, fmt.Errorf("card: %w", err)
	}
	pdf.AddPage()

	// A band with the club's name, then the member on the left and the QR
	// code on the right.
	pdf.SetFillColor(31, 85, 112) // brand-700
	pdf.Rect(0, 0, 171.2, 24, "F")
	pdf.SetTextColor(255, 255, 255)
	pdf.SetFont("DejaVu", "B", 16)
	pdf.SetXY(10, 6)
	pdf.CellFormat(151, 8, clean(m.Club), "", 0, "L", false, 0, "")
	pdf.SetFont("DejaVu", "", 10)
	pdf.SetXY(10, 14)
	pdf.CellFormat(151, 6, m.Texts.Title, "", 0, "L", false, 0, "")

	pdf.SetTextColor(30, 41, 59)
	pdf.SetFont("DejaVu", "B", 18)
	pdf.SetXY(10, 34)
	pdf.MultiCell(100, 8, clean(m.Name), "", "L", false)
	y := pdf.GetY() + 3
	rows := [][2]string{
		{m.Texts.Membership, m.Type},
		{m.Texts.Period, m.Period},
		{m.Texts.Valid, m.Dates},
	}
	for _, r := range rows {
		pdf.SetFont("DejaVu", "", 9)
		pdf.SetXY(10, y)
		pdf.CellFormat(100, 5, r[0], "", 0, "L", false, 0, "")
		pdf.SetFont("DejaVu", "B", 12)
		pdf.SetXY(10, y+5)
		pdf.CellFormat(100, 6, clean(r[1]), "", 0, "L", false, 0, "")
		y += 13
	}

	code, err := qr.Encode(m.VerifyURL, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("card QR code: %w", err)
	}
	drawCode(pdf, code, 118, 32, 46)
	pdf.LinkString(118, 32, 46, 46, m.VerifyURL)
	pdf.SetFont("DejaVu", "", 7)
	pdf.SetXY(112, 80)
	pdf.CellFormat(58, 4, m.Texts.Scan, "", 0, "C", false, 0, "")

	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, fmt.Errorf("card PDF: %w", err)
	}
	return out.Bytes(), nil
}

// drawCode draws the QR code's dark modules as filled rectangles of one
// path, at (x, y), size millimetres square. Vector modules stay sharp on
// any screen and printer, and cost no image: a 400-pixel PNG had been an
// eighth of a card's rendering time, and a season opening renders one
// card per member. One path filled once leaves no seams between modules
// where a viewer anti-aliases each shape's edges.
func drawCode(pdf *fpdf.Fpdf, code image.Image, x, y, size float64) {
	b := code.Bounds()
	module := size / float64(b.Dx())
	pdf.SetFillColor(0, 0, 0)
	for _, r := range darkRuns(code) {
		left, top, right := x+float64(r.from)*module, y+float64(r.row)*module, x+float64(r.to)*module
		pdf.MoveTo(left, top)
		pdf.LineTo(right, top)
		pdf.LineTo(right, top+module)
		pdf.LineTo(left, top+module)
		pdf.ClosePath()
	}
	pdf.DrawPath("F")
}

// run is a row's dark modules from column from up to (not including) to.
type run struct{ row, from, to int }

// darkRuns is the code's dark modules as runs along each row, counted from
// the image's corner: one rectangle a run rather than one a module.
func darkRuns(code image.Image) []run {
	b := code.Bounds()
	dark := func(col, row int) bool {
		return color.GrayModel.Convert(code.At(b.Min.X+col, b.Min.Y+row)).(color.Gray).Y < 128
	}
	var runs []run
	for row := range b.Dy() {
		for col := 0; col < b.Dx(); {
			if !dark(col, row) {
				col++
				continue
			}
			from := col
			for col < b.Dx() && dark(col, row) {
				col++
			}
			runs = append(runs, run{row, from, col})
		}
	}
	return runs
}

// clean is fonts.Clean: fpdf panics on characters above U+FFFF.
func clean(s string) string { return fonts.Clean(s) }
