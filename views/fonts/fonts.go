// Package fonts holds the DejaVu Sans font (its licence is LICENSE) that
// the PDFs embed (the card, the year-end report): the PDF core fonts know
// only cp1252, and members' names and the club's texts are not all
// Latin-1.
package fonts

import (
	_ "embed"
	"fmt"
	"strings"

	"codeberg.org/go-pdf/fpdf"
)

var (
	// Regular is DejaVu Sans.
	//go:embed DejaVuSans.ttf
	Regular []byte
	// Bold is DejaVu Sans Bold.
	//go:embed DejaVuSans-Bold.ttf
	Bold []byte
)

// Clean drops characters above U+FFFF (emoji and the like), on which
// fpdf panics, and control characters.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r > 0xFFFF || r < 0x20 || r == 0x7F {
			return -1
		}
		return r
	}, s)
}

// Add adds DejaVu Sans, regular and bold, to pdf as the family "DejaVu"
// (SetFont("DejaVu", "" or "B", size)), each cut to
// printable ASCII and the characters of texts (Subset): pass every text
// the document prints, separators included. A character left out prints
// as the font's empty box (.notdef).
func Add(pdf *fpdf.Fpdf, texts ...string) error {
	regular, err := Subset(Regular, texts...)
	if err != nil {
		return fmt.Errorf("PDF font: %w", err)
	}
	bold, err := Subset(Bold, texts...)
	if err != nil {
		return fmt.Errorf("PDF font: %w", err)
	}
	pdf.AddUTF8FontFromBytes("DejaVu", "", regular)
	pdf.AddUTF8FontFromBytes("DejaVu", "B", bold)
	return pdf.Error()
}
