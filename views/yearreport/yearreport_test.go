package yearreport_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"portal/views/yearreport"
)

func doc() yearreport.Doc {
	return yearreport.Doc{Club: "Ruderverein Zürich – Ærø 🚣", Title: "Jahresbericht", Period: "Saison 2026/2027", Dates: "1. November 2026 – 31. Oktober 2027",
		Generated: "Stand: 27. November 2026", Created: time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC), Currency: "EUR",
		CSVHead: [5]string{"Abschnitt", "Posten", "Größe", "Wert", "Währung"},
		Tables: []yearreport.Table{{ID: "summary", Title: "Übersicht", Columns: []string{"Posten", "Anzahl", "Betrag"},
			Rows: []yearreport.Row{{Label: "=Bezahlte Bestellungen", Cells: []yearreport.Cell{{Text: "3", Value: "3"}, {Text: "1.234,50\u00a0EUR", Value: "1234.50", Money: true}}},
				{Label: "abzüglich erstattet", Cells: []yearreport.Cell{{Text: "–"}, {Text: "-10,00\u00a0EUR", Value: "-10.00", Money: true}}}},
			Total: &yearreport.Row{Label: "Einnahmen", Cells: []yearreport.Cell{{Text: "–"}, {Text: "1.224,50\u00a0EUR", Value: "1224.50", Money: true}}}}},
		Notes: []string{"Alle Zahlen gehören zum Zeitraum."}}
}

// PDFText is the text of a PDF, page after page.
func PDFText(t *testing.T, b []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		s, err := p.GetPlainText(nil)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(s)
	}
	return out.String()
}

// TestRenderPDFReadsBack: the PDF's text is the Doc's, in German with
// its umlauts, the emoji left out (fpdf would panic on it).
func TestRenderPDFReadsBack(t *testing.T) {
	b, err := yearreport.RenderPDF(doc())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := yearreport.RenderPDF(doc())
	if !bytes.Equal(b, again) {
		t.Error("the same report renders to different bytes")
	}
	text := PDFText(t, b)
	for _, want := range []string{"Ruderverein Zürich", "Ærø", "Übersicht", "abzüglich erstattet", "1.234,50", "1.224,50", "Einnahmen", "Alle Zahlen gehören"} {
		if !strings.Contains(strings.ReplaceAll(text, "\u00a0", " "), want) {
			t.Errorf("PDF text lacks %q:\n%s", want, text)
		}
	}
}

// TestWriteCSVIsLongAndSafe: a figure a line, plain values, the cell
// function applied to every cell.
func TestWriteCSVIsLongAndSafe(t *testing.T) {
	var buf bytes.Buffer
	safe := func(s string) string {
		if strings.HasPrefix(s, "=") {
			return "'" + s
		}
		return s
	}
	if err := yearreport.WriteCSV(&buf, doc(), safe); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"Abschnitt", "Posten", "Größe", "Wert", "Währung"},
		{"Übersicht", "'=Bezahlte Bestellungen", "Anzahl", "3", ""}, {"Übersicht", "'=Bezahlte Bestellungen", "Betrag", "1234.50", "EUR"},
		{"Übersicht", "abzüglich erstattet", "Anzahl", "", ""}, {"Übersicht", "abzüglich erstattet", "Betrag", "-10.00", "EUR"},
		{"Übersicht", "Einnahmen", "Anzahl", "", ""}, {"Übersicht", "Einnahmen", "Betrag", "1224.50", "EUR"}}
	if len(recs) != len(want) {
		t.Fatalf("%d records: %q", len(recs), recs)
	}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("record %d: %q, want %q", i, recs[i], want[i])
		}
	}
}
