package fonts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Subset returns font (Regular or Bold, or another TrueType font with
// outlines in glyf) cut down to the glyphs of printable ASCII and of the
// characters in texts, as a TrueType font of its own: the same outlines,
// advances, hinting and names, with a small cmap and the glyphs renumbered.
//
// Why: fpdf parses a UTF-8 font and maps its every character for each
// document, then cuts it to the characters used. For DejaVu Sans (some
// 6,000 glyphs) that was two thirds of a membership card's 26 ms and most
// of its 17 MB of garbage, and a season opening sends a card per member.
// Handing fpdf a font of a hundred glyphs keeps the output's glyphs as
// they were. The source font is parsed once per process.
//
// Characters the font has no glyph for are left out, as fpdf left them.
func Subset(font []byte, texts ...string) ([]byte, error) {
	c, err := Cut(font, texts...)
	if err != nil {
		return nil, err
	}
	return slices.Clone(c.File), nil // the cut is shared; the caller may keep or change its copy
}

// Cut is Subset with what a PDF writer needs to set text in the cut
// without parsing it again: each character's glyph and each glyph's
// advance, and the font's metrics.
//
// The same font and characters give the same cut, shared: do not change
// it. A club's cards print mostly the same characters (its labels, names
// in its alphabet), so most find their fonts cut already, and a PDF
// writer may keep what it made of a cut (views/pdfpage does).
func Cut(font []byte, texts ...string) (*Subsetted, error) {
	src, err := parsed(font)
	if err != nil {
		return nil, err
	}
	runes := src.runes(texts)
	key := cutKey{fontKey{&font[0], len(font)}, string(runes)}
	cutsMu.Lock()
	c, ok := cuts[key]
	cutsMu.Unlock()
	if ok {
		return c, nil
	}
	if c, err = src.subset(runes); err != nil {
		return nil, err
	}
	cutsMu.Lock()
	defer cutsMu.Unlock()
	if len(cuts) >= keptCuts {
		clear(cuts) // seldom: a few hundred kilobytes to cut again
	}
	cuts[key] = c
	return c, nil
}

// cutKey names a cut: the font and its characters, sorted.
type cutKey struct {
	font  fontKey
	runes string
}

// keptCuts bounds the cuts kept: each is some 20 to 60 kB.
const keptCuts = 128

var (
	cutsMu sync.Mutex
	cuts   = map[cutKey]*Subsetted{}
)

// Subsetted is a font cut to some characters.
type Subsetted struct {
	// File is the cut as a TrueType font file.
	File []byte
	// Metrics are the font's, unchanged by the cut.
	Metrics
	glyphs   map[rune]uint16 // the cut's characters, to their glyphs in File
	advances []uint16        // by glyph in File, in font units
	chars    []rune          // by glyph in File: the character it is drawn for, 0 for none (.notdef, components)

	derivedOnce sync.Once
	derived     any
}

// Derived is what build makes of the cut (a PDF writer's compressed font
// objects), made on the first call and kept with the cut: a shared cut is
// made into objects once, and they go when the cut goes. One writer uses
// it: every call gets the first build's result.
func (s *Subsetted) Derived(build func() any) any {
	s.derivedOnce.Do(func() { s.derived = build() })
	return s.derived
}

// Metrics are a font's design units and the figures a PDF font
// descriptor gives, in font units (UnitsPerEm to the em).
type Metrics struct {
	PostScriptName  string
	UnitsPerEm      int
	Ascent, Descent int    // from the baseline, Descent negative (hhea)
	CapHeight       int    // OS/2, else Ascent
	BBox            [4]int // xMin, yMin, xMax, yMax of all glyphs (head)
	ItalicAngle     float64
	Weight          int // OS/2 usWeightClass: 400 regular, 700 bold
}

// Glyph is character c's glyph in File, and whether the cut has one; a
// character without prints as glyph 0, the empty box (.notdef).
func (s *Subsetted) Glyph(c rune) (uint16, bool) {
	g, ok := s.glyphs[c]
	return g, ok
}

// Advance is glyph g's advance width in font units.
func (s *Subsetted) Advance(g uint16) int {
	if int(g) >= len(s.advances) {
		return 0
	}
	return int(s.advances[g])
}

// Glyphs is the number of glyphs in File; glyph ids run from 0 below it.
func (s *Subsetted) Glyphs() int { return len(s.advances) }

// Char is the character glyph g is drawn for, 0 for .notdef and for
// glyphs that are only parts of others (an accent of a composite).
func (s *Subsetted) Char(g uint16) rune {
	if int(g) >= len(s.chars) {
		return 0
	}
	return s.chars[g]
}

// fontKey names a font's bytes by where they are and how many: Regular
// and Bold are the same slices for the life of the process.
type fontKey struct {
	first *byte
	size  int
}

var (
	parsedMu    sync.Mutex
	parsedFonts = map[fontKey]*trueType{}
)

// parsed is font's parse, made once per font.
func parsed(font []byte) (*trueType, error) {
	if len(font) == 0 {
		return nil, errors.New("fonts: empty font")
	}
	key := fontKey{&font[0], len(font)}
	parsedMu.Lock()
	defer parsedMu.Unlock()
	if t, ok := parsedFonts[key]; ok {
		return t, nil
	}
	t, err := parseTrueType(font)
	if err != nil {
		return nil, err
	}
	parsedFonts[key] = t
	return t, nil
}

// trueType is what subsetting reads of a font, read-only once made.
type trueType struct {
	tables    map[string][]byte // by tag
	cmap      map[rune]uint16   // from the Unicode BMP subtable (format 4)
	loca      []uint32          // glyph offsets into glyf, numGlyphs+1
	advances  []uint16          // per glyph
	bearings  []int16           // left side bearings, per glyph
	numGlyphs int
	metrics   Metrics
}

// keptTables are the tables fpdf reads or copies into its own cut: metrics,
// names, outlines and the hinting programs. Layout tables (GSUB, GPOS,
// kern) go: fpdf does not use them.
var keptTables = []string{"OS/2", "cmap", "cvt ", "fpgm", "gasp", "glyf", "head", "hhea", "hmtx", "loca", "maxp", "name", "post", "prep"}

func parseTrueType(font []byte) (*trueType, error) {
	bad := func(what string) error {
		return fmt.Errorf("fonts: not a TrueType font this package can cut: %s", what)
	}
	if len(font) < 12 || binary.BigEndian.Uint32(font) != 0x00010000 {
		return nil, bad("no TrueType header")
	}
	n := int(binary.BigEndian.Uint16(font[4:]))
	if len(font) < 12+16*n {
		return nil, bad("short table directory")
	}
	t := &trueType{tables: map[string][]byte{}}
	for i := range n {
		rec := font[12+16*i:]
		tag := string(rec[:4])
		off, length := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
		if uint64(off)+uint64(length) > uint64(len(font)) {
			return nil, bad("table " + tag + " out of bounds")
		}
		t.tables[tag] = font[off : off+length]
	}
	for _, tag := range []string{"cmap", "glyf", "head", "hhea", "hmtx", "loca", "maxp", "post"} {
		if _, ok := t.tables[tag]; !ok {
			return nil, bad("no " + tag + " table")
		}
	}
	head, hhea, maxp := t.tables["head"], t.tables["hhea"], t.tables["maxp"]
	if len(head) < 54 || len(hhea) < 36 || len(maxp) < 6 || len(t.tables["post"]) < 32 {
		return nil, bad("short head, hhea, maxp or post")
	}
	t.numGlyphs = int(binary.BigEndian.Uint16(maxp[4:]))
	longLoca := binary.BigEndian.Uint16(head[50:]) == 1
	loca := t.tables["loca"]
	t.loca = make([]uint32, t.numGlyphs+1)
	for g := range t.loca {
		switch {
		case longLoca && len(loca) >= 4*(g+1):
			t.loca[g] = binary.BigEndian.Uint32(loca[4*g:])
		case !longLoca && len(loca) >= 2*(g+1):
			t.loca[g] = 2 * uint32(binary.BigEndian.Uint16(loca[2*g:]))
		default:
			return nil, bad("short loca")
		}
		if t.loca[g] > uint32(len(t.tables["glyf"])) || (g > 0 && t.loca[g] < t.loca[g-1]) {
			return nil, bad("loca out of order")
		}
	}
	metrics := int(binary.BigEndian.Uint16(hhea[34:]))
	hmtx := t.tables["hmtx"]
	if metrics == 0 || metrics > t.numGlyphs || len(hmtx) < 4*metrics+2*(t.numGlyphs-metrics) {
		return nil, bad("short hmtx")
	}
	t.advances, t.bearings = make([]uint16, t.numGlyphs), make([]int16, t.numGlyphs)
	for g := range t.numGlyphs {
		if g < metrics {
			t.advances[g] = binary.BigEndian.Uint16(hmtx[4*g:])
			t.bearings[g] = int16(binary.BigEndian.Uint16(hmtx[4*g+2:]))
		} else {
			t.advances[g] = t.advances[metrics-1]
			t.bearings[g] = int16(binary.BigEndian.Uint16(hmtx[4*metrics+2*(g-metrics):]))
		}
	}
	var err error
	if t.cmap, err = unicodeCmap(t.tables["cmap"]); err != nil {
		return nil, bad(err.Error())
	}
	i16 := func(b []byte, at int) int { return int(int16(binary.BigEndian.Uint16(b[at:]))) }
	t.metrics = Metrics{
		PostScriptName: postScriptName(t.tables["name"]),
		UnitsPerEm:     int(binary.BigEndian.Uint16(head[18:])),
		Ascent:         i16(hhea, 4),
		Descent:        i16(hhea, 6),
		BBox:           [4]int{i16(head, 36), i16(head, 38), i16(head, 40), i16(head, 42)},
		ItalicAngle:    float64(int32(binary.BigEndian.Uint32(t.tables["post"][4:]))) / 65536,
		Weight:         400,
	}
	t.metrics.CapHeight = t.metrics.Ascent
	if os2 := t.tables["OS/2"]; len(os2) >= 6 {
		t.metrics.Weight = int(binary.BigEndian.Uint16(os2[4:]))
		if binary.BigEndian.Uint16(os2) >= 2 && len(os2) >= 90 {
			t.metrics.CapHeight = i16(os2, 88)
		}
	}
	if t.metrics.UnitsPerEm < 16 {
		return nil, bad("units per em")
	}
	return t, nil
}

// postScriptName is the font's PostScript name (name id 6), from the
// Windows (UTF-16) or the Macintosh (Roman) record; "" when it has none.
func postScriptName(name []byte) string {
	if len(name) < 6 {
		return ""
	}
	count, strings := int(binary.BigEndian.Uint16(name[2:])), int(binary.BigEndian.Uint16(name[4:]))
	for i := range count {
		rec := 6 + 12*i
		if len(name) < rec+12 {
			return ""
		}
		platform, id := binary.BigEndian.Uint16(name[rec:]), binary.BigEndian.Uint16(name[rec+6:])
		length, off := int(binary.BigEndian.Uint16(name[rec+8:])), int(binary.BigEndian.Uint16(name[rec+10:]))
		if id != 6 || len(name) < strings+off+length {
			continue
		}
		raw := name[strings+off : strings+off+length]
		var out []byte
		switch platform {
		case 1:
			out = raw
		case 3:
			for j := 1; j < len(raw); j += 2 {
				out = append(out, raw[j])
			}
		default:
			continue
		}
		// A PostScript name is printable ASCII without delimiters.
		var clean []byte
		for _, b := range out {
			if b > 0x20 && b < 0x7F && !bytes.ContainsRune([]byte("[](){}<>/%"), rune(b)) {
				clean = append(clean, b)
			}
		}
		return string(clean)
	}
	return ""
}

// unicodeCmap reads the format 4 subtable for Unicode (Windows Unicode
// BMP, else any Unicode platform one), the one fpdf reads.
func unicodeCmap(cmap []byte) (map[rune]uint16, error) {
	if len(cmap) < 4 {
		return nil, errors.New("short cmap")
	}
	var sub []byte
	for i := range int(binary.BigEndian.Uint16(cmap[2:])) {
		rec := 4 + 8*i
		if len(cmap) < rec+8 {
			return nil, errors.New("short cmap")
		}
		platform, encoding, off := binary.BigEndian.Uint16(cmap[rec:]), binary.BigEndian.Uint16(cmap[rec+2:]), binary.BigEndian.Uint32(cmap[rec+4:])
		if uint64(off)+4 > uint64(len(cmap)) || binary.BigEndian.Uint16(cmap[off:]) != 4 {
			continue
		}
		if platform == 3 && encoding == 1 {
			sub = cmap[off:]
			break
		}
		if platform == 0 && sub == nil {
			sub = cmap[off:]
		}
	}
	if len(sub) < 14 {
		return nil, errors.New("no Unicode cmap of format 4")
	}
	segs := int(binary.BigEndian.Uint16(sub[6:])) / 2
	if len(sub) < 16+8*segs {
		return nil, errors.New("short cmap format 4")
	}
	u16 := func(at int) uint16 { return binary.BigEndian.Uint16(sub[at:]) }
	ends, starts, deltas, offsets := 14, 16+2*segs, 16+4*segs, 16+6*segs
	out := map[rune]uint16{}
	for s := range segs {
		start, end, delta, rangeOffset := u16(starts+2*s), u16(ends+2*s), u16(deltas+2*s), u16(offsets+2*s)
		for c := uint32(start); c <= uint32(end) && c != 0xFFFF; c++ {
			var g uint16
			if rangeOffset == 0 {
				g = uint16(c) + delta
			} else {
				at := offsets + 2*s + int(rangeOffset) + 2*int(c-uint32(start))
				if at+2 > len(sub) {
					continue
				}
				if g = u16(at); g != 0 {
					g += delta
				}
			}
			if g != 0 {
				out[rune(c)] = g
			}
		}
	}
	return out, nil
}

// Flags of a composite glyph's component (OpenType glyf).
const (
	argsAreWords  = 0x0001
	haveScale     = 0x0008
	moreComponent = 0x0020
	haveXYScale   = 0x0040
	haveTwoByTwo  = 0x0080
)

// glyph is glyph g's outline data.
func (t *trueType) glyph(g uint16) []byte {
	return t.tables["glyf"][t.loca[g]:t.loca[g+1]]
}

// components calls each for the glyph index of every component of a
// composite glyph, with the index's offset in data; a simple glyph has none.
func components(data []byte, each func(at int, g uint16)) error {
	if len(data) < 10 || int16(binary.BigEndian.Uint16(data)) >= 0 {
		return nil
	}
	for at := 10; ; {
		if len(data) < at+4 {
			return errors.New("fonts: short composite glyph")
		}
		flags := binary.BigEndian.Uint16(data[at:])
		each(at+2, binary.BigEndian.Uint16(data[at+2:]))
		at += 4
		if flags&argsAreWords != 0 {
			at += 4
		} else {
			at += 2
		}
		switch {
		case flags&haveScale != 0:
			at += 2
		case flags&haveXYScale != 0:
			at += 4
		case flags&haveTwoByTwo != 0:
			at += 8
		}
		if flags&moreComponent == 0 {
			return nil
		}
	}
}

// runes are printable ASCII and the characters of texts that the font
// has, sorted, once each.
func (t *trueType) runes(texts []string) []rune {
	runes := make([]rune, 0, 0x7F-0x20+16)
	for c := rune(0x20); c < 0x7F; c++ {
		if _, ok := t.cmap[c]; ok {
			runes = append(runes, c)
		}
	}
	for _, s := range texts {
		for _, c := range s {
			if _, ok := t.cmap[c]; ok && (c < 0x20 || c >= 0x7F) {
				runes = append(runes, c)
			}
		}
	}
	slices.Sort(runes)
	return slices.Compact(runes)
}

// subset cuts the font to runes (from t.runes).
func (t *trueType) subset(runes []rune) (*Subsetted, error) {
	// New glyph ids follow the characters' order, so consecutive
	// characters make one cmap segment. Glyph 0 (.notdef) stays first.
	old := []uint16{0}
	newID := map[uint16]uint16{0: 0}
	add := func(g uint16) {
		if _, ok := newID[g]; !ok && int(g) < t.numGlyphs {
			newID[g] = uint16(len(old))
			old = append(old, g)
		}
	}
	for _, c := range runes {
		add(t.cmap[c])
	}
	// Components of composite glyphs (accented letters), and theirs.
	for i := 0; i < len(old); i++ {
		if err := components(t.glyph(old[i]), func(_ int, g uint16) { add(g) }); err != nil {
			return nil, err
		}
	}

	var glyf, loca, hmtx []byte
	for _, g := range old {
		loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))
		start := len(glyf)
		glyf = append(glyf, t.glyph(g)...)
		var err error
		if cerr := components(glyf[start:], func(at int, component uint16) {
			id, ok := newID[component]
			if !ok {
				err = fmt.Errorf("fonts: glyph %d has component %d beyond the font", g, component)
			}
			binary.BigEndian.PutUint16(glyf[start+at:], id)
		}); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return nil, err
		}
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
		hmtx = binary.BigEndian.AppendUint16(hmtx, t.advances[g])
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(t.bearings[g]))
	}
	loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))

	tables := map[string][]byte{"glyf": glyf, "loca": loca, "hmtx": hmtx, "cmap": cmapFormat4(runes, newID, t.cmap)}
	head := slices.Clone(t.tables["head"])
	binary.BigEndian.PutUint32(head[8:], 0)  // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1) // long loca
	tables["head"] = head
	hhea := slices.Clone(t.tables["hhea"])
	binary.BigEndian.PutUint16(hhea[34:], uint16(len(old))) // numberOfHMetrics
	tables["hhea"] = hhea
	maxp := slices.Clone(t.tables["maxp"])
	binary.BigEndian.PutUint16(maxp[4:], uint16(len(old))) // numGlyphs
	tables["maxp"] = maxp
	// post format 3: the header (italic angle, underline, fixed pitch)
	// without glyph names.
	post := slices.Clone(t.tables["post"][:32])
	binary.BigEndian.PutUint32(post, 0x00030000)
	tables["post"] = post
	for _, tag := range keptTables {
		if _, done := tables[tag]; !done {
			if data, ok := t.tables[tag]; ok {
				tables[tag] = data
			}
		}
	}
	cut := &Subsetted{File: writeTrueType(tables), Metrics: t.metrics, glyphs: make(map[rune]uint16, len(runes)), chars: make([]rune, len(old))}
	for _, c := range runes {
		g := newID[t.cmap[c]]
		cut.glyphs[c] = g
		if cut.chars[g] == 0 {
			cut.chars[g] = c
		}
	}
	cut.advances = make([]uint16, len(old))
	for i, g := range old {
		cut.advances[i] = t.advances[g]
	}
	return cut, nil
}

// cmapFormat4 maps runes to their new glyphs in one Unicode BMP subtable:
// a segment for each run of consecutive characters with consecutive
// glyphs, and the closing 0xFFFF segment.
func cmapFormat4(runes []rune, newID map[uint16]uint16, cmap map[rune]uint16) []byte {
	type segment struct{ start, end, delta uint16 }
	var segs []segment
	for _, c := range runes {
		g := newID[cmap[c]]
		if n := len(segs); n > 0 && uint16(c) == segs[n-1].end+1 && g == uint16(c)+segs[n-1].delta {
			segs[n-1].end++
			continue
		}
		segs = append(segs, segment{uint16(c), uint16(c), g - uint16(c)})
	}
	segs = append(segs, segment{0xFFFF, 0xFFFF, 1})
	n := len(segs)
	searchRange, entrySelector := 2, 0
	for searchRange*2 <= 2*n {
		searchRange *= 2
		entrySelector++
	}
	sub := make([]byte, 0, 16+8*n)
	for _, v := range []int{4, 16 + 8*n, 0, 2 * n, searchRange, entrySelector, 2*n - searchRange} {
		sub = binary.BigEndian.AppendUint16(sub, uint16(v))
	}
	for _, s := range segs {
		sub = binary.BigEndian.AppendUint16(sub, s.end)
	}
	sub = binary.BigEndian.AppendUint16(sub, 0) // reservedPad
	for _, s := range segs {
		sub = binary.BigEndian.AppendUint16(sub, s.start)
	}
	for _, s := range segs {
		sub = binary.BigEndian.AppendUint16(sub, s.delta)
	}
	for range segs {
		sub = binary.BigEndian.AppendUint16(sub, 0) // idRangeOffset: deltas only
	}
	// Version 0, one subtable: Windows (3), Unicode BMP (1), at 12.
	out := []byte{0, 0, 0, 1, 0, 3, 0, 1, 0, 0, 0, 12}
	return append(out, sub...)
}

// writeTrueType lays tables out as a font file: the directory sorted by
// tag, each table 4-byte aligned with its checksum, and head's
// checkSumAdjustment making the whole file's sum 0xB1B0AFBA.
func writeTrueType(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for tag := range tables {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	n := len(tags)
	searchRange, entrySelector := 1, 0
	for searchRange*2 <= n {
		searchRange *= 2
		entrySelector++
	}
	out := binary.BigEndian.AppendUint32(nil, 0x00010000)
	for _, v := range []int{n, 16 * searchRange, entrySelector, 16 * (n - searchRange)} {
		out = binary.BigEndian.AppendUint16(out, uint16(v))
	}
	offset := 12 + 16*n
	var headAt int
	for _, tag := range tags {
		data := tables[tag]
		if tag == "head" {
			headAt = offset
		}
		out = append(out, tag...)
		out = binary.BigEndian.AppendUint32(out, checksum(data))
		out = binary.BigEndian.AppendUint32(out, uint32(offset))
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		offset += (len(data) + 3) &^ 3
	}
	for _, tag := range tags {
		out = append(out, tables[tag]...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	return out
}

// checksum is the OpenType table checksum: the sum of big-endian uint32s,
// the last one padded with zeros.
func checksum(data []byte) uint32 {
	var sum uint32
	for i := 0; i < len(data); i += 4 {
		var word [4]byte
		copy(word[:], data[i:])
		sum += binary.BigEndian.Uint32(word[:])
	}
	return sum
}
