// Package yearreport is the year-end report as printed: one Doc, built
// once by the handler from the engine's figures in the page's language,
// which the staff page shows, WriteCSV writes as a spreadsheet and
// RenderPDF prints (codeberg.org/go-pdf/fpdf, DejaVu Sans embedded), so
// the three never disagree.
package yearreport

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"portal/views/fonts"
)

// Doc is the report, every text in the reader's language.
type Doc struct {
	Club, Title, Period, Dates string
	// Generated says when the figures were taken (printed).
	Generated string
	// Created dates the PDF (its creation date).
	Created time.Time
	// Tables in the order printed; the first is the summary.
	Tables []Table
	// Notes explain the figures (what income means...).
	Notes []string
	// CSV headings: section, item, measure, value, currency.
	CSVHead  [5]string
	Currency string
}

// Table is one section of the report.
type Table struct {
	// ID names the section for tests and anchors ("summary", "by-type").
	ID, Title string
	// Columns are the headings; the first is the rows' label's.
	Columns []string
	Rows    []Row
	// Total is the sum row; nil when the section has none.
	Total *Row
	// Wide tables (more figures a row than half a page holds: money by
	// payment method) take the page's whole width, and below a tablet's
	// width each row is a block of its own, its figures under their
	// column's name, so that no word breaks inside and no column is cut
	// off. The PDF and the CSV are not affected.
	Wide bool
}

// Row is a label and its cells, one per column after the first.
type Row struct {
	Label string
	Cells []Cell
	// Strong rows (the income) are printed bold.
	Strong bool
}

// Cell is one figure: Text as the reader reads it (1.234,50 EUR), Value
// plain for a spreadsheet (1234.50, or a count), Money when it is an
// amount in the Doc's currency.
type Cell struct {
	Text, Value string
	Money       bool
}

// WriteCSV writes the report in long form, a figure a line: section,
// item, measure, value, currency, after the headings. cell neutralises
// formulas (engine.CSVCell) in every text taken from the club's data.
func WriteCSV(w io.Writer, d Doc, cell func(string) string) error {
	out := csv.NewWriter(w)
	rec := func(r []string) error {
		for i, v := range r {
			r[i] = cell(v)
		}
		return out.Write(r)
	}
	if err := rec(d.CSVHead[:]); err != nil {
		return err
	}
	for _, t := range d.Tables {
		rows := t.Rows
		if t.Total != nil {
			rows = append(rows[:len(rows):len(rows)], *t.Total)
		}
		for _, r := range rows {
			for i, c := range r.Cells {
				cur := ""
				if c.Money {
					cur = d.Currency
				}
				if i+1 >= len(t.Columns) {
					break
				}
				if err := rec([]string{t.Title, r.Label, t.Columns[i+1], c.Value, cur}); err != nil {
					return err
				}
			}
		}
	}
	out.Flush()
	return out.Error()
}

// RenderPDF prints the report on A4 pages, a table per section, with the
// page number and the period in the footer.
func RenderPDF(d Doc) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(d.Created.UTC())
	pdf.SetModificationDate(d.Created.UTC())
	pdf.SetCatalogSort(true)
	pdf.SetProducer("portal", true)
	pdf.SetTitle(fonts.Clean(d.Title+" – "+d.Period), true)
	if err := fonts.Add(pdf, d.texts()...); err != nil {
		return nil, fmt.Errorf("year report PDF: %w", err)
	}
	pdf.SetMargins(18, 18, 18)
	pdf.SetAutoPageBreak(true, 18)
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		pdf.SetFont("DejaVu", "", 8)
		pdf.SetTextColor(100, 116, 139)
		pdf.CellFormat(0, 5, fonts.Clean(fmt.Sprintf("%s · %s · %d", d.Club, d.Period, pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	pdf.AddPage()
	const width = 174.0 // A4 less the margins
	pdf.SetTextColor(30, 41, 59)
	pdf.SetFont("DejaVu", "B", 16)
	pdf.MultiCell(width, 8, fonts.Clean(d.Club), "", "L", false)
	pdf.SetFont("DejaVu", "B", 13)
	pdf.MultiCell(width, 7, fonts.Clean(d.Title+" – "+d.Period), "", "L", false)
	pdf.SetFont("DejaVu", "", 9)
	pdf.MultiCell(width, 5, fonts.Clean(d.Dates+" · "+d.Generated), "", "L", false)
	pdf.Ln(3)
	for _, t := range d.Tables {
		printTable(pdf, t, width)
	}
	pdf.SetFont("DejaVu", "", 8)
	pdf.SetTextColor(71, 85, 105)
	for _, n := range d.Notes {
		pdf.MultiCell(width, 4, fonts.Clean(n), "", "L", false)
		pdf.Ln(1)
	}
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, fmt.Errorf("year report PDF: %w", err)
	}
	return out.Bytes(), nil
}

// texts is every text the PDF may print, for the fonts' cut: the Doc's,
// the separators, the page numbers' digits (in ASCII) and the ellipsis of
// a shortened label.
func (d Doc) texts() []string {
	out := []string{d.Club, d.Title, d.Period, d.Dates, d.Generated, " – · …"}
	out = append(out, d.Notes...)
	for _, t := range d.Tables {
		out = append(out, t.Title)
		out = append(out, t.Columns...)
		for _, r := range slices.Concat(t.Rows, totalOrNone(t.Total)) {
			out = append(out, r.Label)
			for _, c := range r.Cells {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

// printTable prints one section: the figure columns as wide as their
// widest text, the label column what they leave (a smaller font when
// that is too little: the payment methods' five figures).
func printTable(pdf *fpdf.Fpdf, t Table, width float64) {
	figures := len(t.Columns) - 1
	size := 9.0
	var figW, labelW float64
	for ; size >= 7; size-- {
		figW = 20
		pdf.SetFont("DejaVu", "B", size)
		for _, r := range append(t.Rows[:len(t.Rows):len(t.Rows)], totalOrNone(t.Total)...) {
			for _, c := range r.Cells {
				figW = max(figW, pdf.GetStringWidth(fonts.Clean(c.Text))+3)
			}
		}
		pdf.SetFont("DejaVu", "B", size-1)
		for _, h := range t.Columns[1:] {
			figW = max(figW, pdf.GetStringWidth(fonts.Clean(h))+3)
		}
		if labelW = width - figW*float64(figures); labelW >= 50 {
			break
		}
	}
	size = max(size, 7)
	_, pageH := pdf.GetPageSize()
	if pdf.GetY() > pageH-60 {
		pdf.AddPage() // a heading not alone at the foot of a page
	}
	pdf.SetTextColor(30, 41, 59)
	pdf.SetFont("DejaVu", "B", 11)
	pdf.MultiCell(width, 7, fonts.Clean(t.Title), "", "L", false)
	pdf.SetFont("DejaVu", "B", size-1)
	pdf.SetFillColor(241, 245, 249)
	for i, c := range t.Columns {
		w, align := figW, "R"
		if i == 0 {
			w, align = labelW, "L"
		}
		pdf.CellFormat(w, 6, fonts.Clean(c), "B", 0, align, true, 0, "")
	}
	pdf.Ln(-1)
	row := func(r Row, bold bool, border string) {
		style := ""
		if bold || r.Strong {
			style = "B"
		}
		pdf.SetFont("DejaVu", style, size)
		label := fonts.Clean(r.Label)
		for pdf.GetStringWidth(label) > labelW-2 && len([]rune(label)) > 4 {
			label = string([]rune(label)[:len([]rune(label))-2]) + "…"
		}
		pdf.CellFormat(labelW, 6, label, border, 0, "L", false, 0, "")
		for i := 0; i < figures; i++ {
			text := ""
			if i < len(r.Cells) {
				text = r.Cells[i].Text
			}
			pdf.CellFormat(figW, 6, fonts.Clean(text), border, 0, "R", false, 0, "")
		}
		pdf.Ln(-1)
	}
	for _, r := range t.Rows {
		row(r, false, "")
	}
	if t.Total != nil {
		row(*t.Total, true, "T")
	}
	pdf.Ln(4)
}

// totalOrNone is the total row as a slice: none when there is none.
func totalOrNone(total *Row) []Row {
	if total == nil {
		return nil
	}
	return []Row{*total}
}
