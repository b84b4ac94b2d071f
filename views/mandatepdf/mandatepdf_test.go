package mandatepdf_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"portal/views/mandatepdf"
)

// TestRenderReadsBack: the PDF parses, holds every field and the text
// with its accents, and renders to the same bytes twice.
func TestRenderReadsBack(t *testing.T) {
	m := mandatepdf.Model{Title: "Mandat de prélèvement SEPA", TextHeading: "Texte du mandat",
		Text:   "En signant ce formulaire de mandat, vous autorisez (A) Club Nautique Genève à envoyer des instructions 🚣",
		Fields: []mandatepdf.Field{{Label: "Référence du mandat", Value: "CNG-000042"}, {Label: "Titulaire", Value: "Zoë Ærø"}},
		Dated:  time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)}
	b, err := mandatepdf.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := mandatepdf.Render(m); !bytes.Equal(b, again) {
		t.Error("the same mandate renders to different bytes")
	}
	r, err := pdf.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	text, err := r.Page(1).GetPlainText(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Mandat de prélèvement SEPA", "CNG-000042", "Zoë Ærø", "Club Nautique Genève", "Texte du mandat"} {
		if !strings.Contains(text, want) {
			t.Errorf("PDF text lacks %q:\n%s", want, text)
		}
	}
}
