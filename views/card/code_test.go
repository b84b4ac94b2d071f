package card

import (
	"image/color"
	"testing"

	"github.com/boombuler/barcode/qr"
)

// TestDarkRunsPaintTheCode paints the runs back onto an empty grid: every
// module must come out as the code has it, so no module is lost, doubled
// or shifted by the merging into runs.
func TestDarkRunsPaintTheCode(t *testing.T) {
	for _, content := range []string{"https://portal.example/verify/abc", "https://club.example.org/verify/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"} {
		code, err := qr.Encode(content, qr.M, qr.Auto)
		if err != nil {
			t.Fatal(err)
		}
		b := code.Bounds()
		painted := make([][]bool, b.Dy())
		for i := range painted {
			painted[i] = make([]bool, b.Dx())
		}
		runs := darkRuns(code)
		for _, r := range runs {
			if r.from >= r.to || r.to > b.Dx() {
				t.Fatalf("run %+v is empty or leaves the code (%d modules wide)", r, b.Dx())
			}
			for col := r.from; col < r.to; col++ {
				if painted[r.row][col] {
					t.Fatalf("module (%d, %d) painted twice", r.row, col)
				}
				painted[r.row][col] = true
			}
		}
		var dark int
		for row := range b.Dy() {
			for col := range b.Dx() {
				want := code.At(b.Min.X+col, b.Min.Y+row) == color.Black
				if want {
					dark++
				}
				if painted[row][col] != want {
					t.Fatalf("%q: module (%d, %d) painted %v, the code has dark=%v", content, row, col, painted[row][col], want)
				}
			}
		}
		if dark == 0 || len(runs) >= dark {
			t.Fatalf("%q: %d runs for %d dark modules: the runs merge nothing", content, len(runs), dark)
		}
	}
}
