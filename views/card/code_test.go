package card

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
)

// TestEncodeQRReads encodes links of many lengths (versions 2 to 14) and
// reads each back with another implementation (gozxing, ZXing's port), as
// a phone would from the card.
func TestEncodeQRReads(t *testing.T) {
	sizes := map[int]bool{}
	for n := 0; n <= 280; n += 7 {
		text := "https://club.example.org/verify/" + strings.Repeat("aB3-_", n/5+1)[:n]
		code, err := encodeQR(text)
		if err != nil {
			t.Fatal(err)
		}
		sizes[code.size] = true
		if got := decodeQR(t, code); got != text {
			t.Fatalf("%d characters: read %q, encoded %q", len(text), got, text)
		}
	}
	if len(sizes) < 8 {
		t.Fatalf("only %d versions tried", len(sizes))
	}
	if _, err := encodeQR(strings.Repeat("x", 3000)); err == nil {
		t.Fatal("3,000 bytes fit no QR code at level M, but encoded")
	}
}

// decodeQR reads code from pixels: four per module, in a light quiet zone
// of four modules.
func decodeQR(t *testing.T, code *qrCode) string {
	t.Helper()
	const scale, quiet = 4, 4
	side := (code.size + 2*quiet) * scale
	img := image.NewGray(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			col, row := x/scale-quiet, y/scale-quiet
			v := uint8(255)
			if col >= 0 && row >= 0 && col < code.size && row < code.size && code.at(col, row) {
				v = 0
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return res.GetText()
}

// TestPenalty counts the four penalties on grids worked out by hand.
func TestPenalty(t *testing.T) {
	grid := func(dark func(col, row int) bool) *qrCode {
		c := &qrCode{size: 21, dark: make([]bool, 21*21)}
		for row := range 21 {
			for col := range 21 {
				c.dark[row*21+col] = dark(col, row)
			}
		}
		return c
	}
	// All dark: a run of 21 in each of 42 lines (3 + 16 each), 400 blocks
	// (3 each), no finder pattern, and all dark is 50% off (100).
	if got := grid(func(int, int) bool { return true }).penalty(); got != 42*19+400*3+100 {
		t.Errorf("all dark: %d", got)
	}
	// A checkerboard has no run, no block, and is half dark.
	if got := grid(func(col, row int) bool { return (col+row)%2 == 0 }).penalty(); got != 0 {
		t.Errorf("checkerboard: %d", got)
	}
	for _, c := range []struct {
		line string
		want int
	}{
		{"1011101", 40},                // light beyond both ends
		{"00001011101", 40},            // light before
		{"1011101000011", 40},          // light after
		{"1101011101011", 0},           // dark within four on each side
		{"0000101110100001011101", 80}, // two
		{"10111010", 40},
		{"0100111", 0},
	} {
		line := make([]bool, len(c.line))
		for i, ch := range c.line {
			line[i] = ch == '1'
		}
		if got := finderPenalty(line); got != c.want {
			t.Errorf("finder in %s: %d, want %d", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		line string
		want int
	}{{"1111", 0}, {"11111", 3}, {"0000000", 5}, {"1111100000", 6}, {"11110111101", 0}} {
		line := make([]bool, len(c.line))
		for i, ch := range c.line {
			line[i] = ch == '1'
		}
		if got := runPenalty(line); got != c.want {
			t.Errorf("runs in %s: %d, want %d", c.line, got, c.want)
		}
	}
}

// TestDarkRunsPaintTheCode paints the runs back onto an empty grid: every
// module must come out as the code has it, so no module is lost, doubled
// or shifted by the merging into runs.
func TestDarkRunsPaintTheCode(t *testing.T) {
	for _, content := range []string{"https://portal.example/verify/abc", "https://club.example.org/verify/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"} {
		code, err := encodeQR(content)
		if err != nil {
			t.Fatal(err)
		}
		painted := make([]bool, code.size*code.size)
		runs := darkRuns(code)
		for _, r := range runs {
			if r.from >= r.to || r.to > code.size {
				t.Fatalf("run %+v is empty or leaves the code (%d modules wide)", r, code.size)
			}
			for col := r.from; col < r.to; col++ {
				if painted[r.row*code.size+col] {
					t.Fatalf("module (%d, %d) painted twice", r.row, col)
				}
				painted[r.row*code.size+col] = true
			}
		}
		var dark int
		for i, want := range code.dark {
			if want {
				dark++
			}
			if painted[i] != want {
				t.Fatalf("%q: module %d painted %v, the code has dark=%v", content, i, painted[i], want)
			}
		}
		if dark == 0 || len(runs) >= dark {
			t.Fatalf("%q: %d runs for %d dark modules: the runs merge nothing", content, len(runs), dark)
		}
	}
}
