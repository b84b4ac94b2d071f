// Package mandatepdf prints a signed SEPA Direct Debit mandate as a PDF
// (codeberg.org/go-pdf/fpdf, DejaVu Sans embedded for names and texts
// beyond Latin-1): the member's copy attached to the mandate e-mail. The
// text is printed exactly as it was signed; the labels around it are in
// the member's language. The same mandate gives the same bytes (the
// document is dated by its signature or last change), so a message sent
// again carries an identical attachment.
package mandatepdf

import (
	"bytes"
	"fmt"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"portal/views/fonts"
)

// Model is what the mandate's copy shows, every text as the member reads
// it.
type Model struct {
	Title string // "SEPA Direct Debit Mandate", in the member's language
	// Fields are the mandate's data, label and value, in the order
	// printed: creditor, identifier, reference, holder, IBAN, BIC,
	// signed, language and text version.
	Fields []Field
	// TextHeading heads Text, the mandate text exactly as signed.
	TextHeading, Text string
	// Note is printed under the text (the account changed on ...); may be
	// empty.
	Note string
	// Dated is the document's creation date: the signature or the last
	// change of the account.
	Dated time.Time
}

// Field is one labelled value.
type Field struct{ Label, Value string }

// Render prints the mandate on one A4 page.
func Render(m Model) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(m.Dated.UTC())
	pdf.SetModificationDate(m.Dated.UTC())
	pdf.SetCatalogSort(true)
	pdf.SetProducer("portal", true)
	pdf.SetTitle(fonts.Clean(m.Title), true)
	texts := []string{m.Title, m.TextHeading, m.Text, m.Note}
	for _, f := range m.Fields {
		texts = append(texts, f.Label, f.Value)
	}
	if err := fonts.Add(pdf, texts...); err != nil {
		return nil, fmt.Errorf("mandate PDF: %w", err)
	}
	pdf.SetMargins(20, 20, 20)
	pdf.SetAutoPageBreak(true, 20)
	pdf.AddPage()
	const width = 170.0 // A4 less the margins
	pdf.SetTextColor(30, 41, 59)
	pdf.SetFont("DejaVu", "B", 16)
	pdf.MultiCell(width, 9, fonts.Clean(m.Title), "", "L", false)
	pdf.Ln(4)
	labelW := 20.0
	pdf.SetFont("DejaVu", "", 10)
	for _, f := range m.Fields {
		labelW = max(labelW, pdf.GetStringWidth(fonts.Clean(f.Label))+4)
	}
	labelW = min(labelW, 75)
	for _, f := range m.Fields {
		pdf.SetFont("DejaVu", "", 10)
		pdf.SetTextColor(71, 85, 105)
		pdf.CellFormat(labelW, 6, fonts.Clean(f.Label), "", 0, "L", false, 0, "")
		pdf.SetFont("DejaVu", "B", 10)
		pdf.SetTextColor(30, 41, 59)
		pdf.MultiCell(width-labelW, 6, fonts.Clean(f.Value), "", "L", false)
	}
	pdf.Ln(5)
	pdf.SetFont("DejaVu", "B", 11)
	pdf.MultiCell(width, 7, fonts.Clean(m.TextHeading), "", "L", false)
	pdf.SetFont("DejaVu", "", 10)
	pdf.MultiCell(width, 5, fonts.Clean(m.Text), "1", "L", false)
	if m.Note != "" {
		pdf.Ln(4)
		pdf.SetFont("DejaVu", "", 9)
		pdf.SetTextColor(71, 85, 105)
		pdf.MultiCell(width, 5, fonts.Clean(m.Note), "", "L", false)
	}
	var out bytes.Buffer
	if err := pdf.Output(&out); err != nil {
		return nil, fmt.Errorf("mandate PDF: %w", err)
	}
	return out.Bytes(), nil
}
