package banking

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
)

// quietZone is the blank border around a QR code, in modules: four, as ISO
// 18004 asks, or phones fail to find the code on a busy page.
const quietZone = 4

// Code is a payload encoded as a QR symbol, ready to render.
type Code struct {
	Kind    QRKind
	Payload string
	symbol  barcode.Barcode
}

// NewCode encodes a payload with error correction M (what both standards
// prescribe) in byte mode without an ECI header, which EPC and QR-bill
// readers expect for UTF-8 text.
func NewCode(kind QRKind, payload string) (Code, error) {
	s, err := qr.Encode(payload, qr.M, qr.Unicode)
	if err != nil {
		return Code{}, fmt.Errorf("encode QR: %w", err)
	}
	return Code{Kind: kind, Payload: payload, symbol: s}, nil
}

// QRCode builds the transfer's payload (see Transfer.Payload) and encodes it.
func (t Transfer) QRCode() (Code, error) {
	kind, p, err := t.Payload()
	if err != nil {
		return Code{}, err
	}
	return NewCode(kind, p)
}

// modules is the symbol's size in modules, without the quiet zone.
func (c Code) modules() int { return c.symbol.Bounds().Dx() }

// dark reports whether module (x, y) of the symbol is dark.
func (c Code) dark(x, y int) bool {
	r, _, _, _ := c.symbol.At(x, y).RGBA()
	return r < 0x8000
}

// crossBox is where the Swiss cross goes, in modules including the quiet
// zone: a square of 7/46 of the symbol's width at its centre, as the
// QR-bill's 7 mm cross sits on its 46 mm code. ok is false for other kinds.
func (c Code) crossBox() (x0, size float64, ok bool) {
	if c.Kind != KindSwissQR {
		return 0, 0, false
	}
	n := float64(c.modules())
	size = n * 7 / 46
	return quietZone + (n-size)/2, size, true
}

// SVG renders the code as an inline SVG element named title for screen
// readers (role img with aria-label and a title). Dark modules are one path of horizontal
// runs, so a 100-module code stays a few kilobytes.
func (c Code) SVG(title string) string {
	n := c.modules()
	w := n + 2*quietZone
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s" shape-rendering="crispEdges">`, w, w, html.EscapeString(title))
	// The title repeats the name for tools that read it rather than aria-label.
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="`, w, w)
	for y := range n {
		for x := 0; x < n; {
			if !c.dark(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < n && c.dark(x+run, y) {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+quietZone, y+quietZone, run, run)
			x += run
		}
	}
	b.WriteString(`"/>`)
	if x0, s, ok := c.crossBox(); ok {
		b.WriteString(swissCrossSVG(x0, s))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// swissCrossSVG draws the QR-bill's Swiss cross in the box at (x0, x0) of
// side s: a white margin, a black square, a white cross whose arms are
// 6/32 wide and reach 10/32 from the centre (the flag's proportions).
func swissCrossSVG(x0, s float64) string {
	margin := s * 0.5 / 7
	inner := s - 2*margin
	c := x0 + s/2
	arm, reach := inner*6/32, inner*10/32
	f := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	return `<g data-swiss-cross="">` +
		`<rect x="` + f(x0) + `" y="` + f(x0) + `" width="` + f(s) + `" height="` + f(s) + `" fill="#fff"/>` +
		`<rect x="` + f(x0+margin) + `" y="` + f(x0+margin) + `" width="` + f(inner) + `" height="` + f(inner) + `" fill="#000"/>` +
		`<rect x="` + f(c-arm/2) + `" y="` + f(c-reach) + `" width="` + f(arm) + `" height="` + f(2*reach) + `" fill="#fff"/>` +
		`<rect x="` + f(c-reach) + `" y="` + f(c-arm/2) + `" width="` + f(2*reach) + `" height="` + f(arm) + `" fill="#fff"/>` +
		`</g>`
}

// Image renders the code with scale pixels per module, quiet zone and
// (for QR-bills) the Swiss cross included.
func (c Code) Image(scale int) image.Image {
	if scale < 1 {
		scale = 1
	}
	n := c.modules()
	w := (n + 2*quietZone) * scale
	img := image.NewGray(image.Rect(0, 0, w, w))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	fill := func(x0, y0, x1, y1 int, v uint8) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				img.SetGray(x, y, color.Gray{Y: v})
			}
		}
	}
	for y := range n {
		for x := range n {
			if c.dark(x, y) {
				px, py := (x+quietZone)*scale, (y+quietZone)*scale
				fill(px, py, px+scale, py+scale, 0)
			}
		}
	}
	if x0, s, ok := c.crossBox(); ok {
		px := func(v float64) int { return int(v*float64(scale) + 0.5) }
		margin := s * 0.5 / 7
		inner := s - 2*margin
		mid := x0 + s/2
		arm, reach := inner*6/32, inner*10/32
		fill(px(x0), px(x0), px(x0+s), px(x0+s), 0xff)
		fill(px(x0+margin), px(x0+margin), px(x0+s-margin), px(x0+s-margin), 0)
		fill(px(mid-arm/2), px(mid-reach), px(mid+arm/2), px(mid+reach), 0xff)
		fill(px(mid-reach), px(mid-arm/2), px(mid+reach), px(mid+arm/2), 0xff)
	}
	return img
}

// PNG encodes Image(scale) as PNG, for e-mails whose clients do not show
// inline SVG.
func (c Code) PNG(scale int) ([]byte, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, c.Image(scale)); err != nil {
		return nil, fmt.Errorf("encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}
