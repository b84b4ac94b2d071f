package card_test

import (
	"bytes"
	"testing"
	"time"

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
