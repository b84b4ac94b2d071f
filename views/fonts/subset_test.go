package fonts_test

import (
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"portal/views/fonts"
)

// TestSubsetKeepsEveryGlyph cuts both fonts to names in several scripts
// and checks each character against the whole font, read by another
// parser (golang.org/x/image/font/sfnt): the same outline, composite
// accents resolved through their renumbered components, and the same
// advance. Characters not asked for are gone.
func TestSubsetKeepsEveryGlyph(t *testing.T) {
	texts := []string{
		"Zoë Ørsted-Łukasz", "Ǻsa Ḗmile Ẫn Ṩ", "Ελένη Παπαδοπούλου", "Наталья Иванова",
		"שרה כהן", "فاطمة الزهراء", "Mariam Ǆ ǅ ﬁ", "1. März 2027 – 31. Oktober 2027 · € 120,00",
	}
	for name, whole := range map[string][]byte{"regular": fonts.Regular, "bold": fonts.Bold} {
		cut, err := fonts.Subset(whole, texts...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cut) > len(whole)/10 {
			t.Errorf("%s: the cut is %d bytes of the font's %d", name, len(cut), len(whole))
		}
		a, err := sfnt.Parse(whole)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sfnt.Parse(cut)
		if err != nil {
			t.Fatalf("%s: the cut does not parse: %v", name, err)
		}
		var checked int
		var bufA, bufB sfnt.Buffer
		for _, text := range append(texts, "The quick brown fox jumps over the lazy dog 0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") {
			for _, c := range text {
				ga, err := a.GlyphIndex(&bufA, c)
				if err != nil || ga == 0 {
					continue // not in the font: not in the cut either
				}
				gb, err := b.GlyphIndex(&bufB, c)
				if err != nil || gb == 0 {
					t.Fatalf("%s: %q (U+%04X) lost", name, c, c)
				}
				sa, err := a.LoadGlyph(&bufA, ga, fixed.I(1000), nil)
				if err != nil {
					t.Fatal(err)
				}
				sa = append(sfnt.Segments(nil), sa...)
				sb, err := b.LoadGlyph(&bufB, gb, fixed.I(1000), nil)
				if err != nil {
					t.Fatalf("%s: %q: %v", name, c, err)
				}
				if len(sa) != len(sb) {
					t.Fatalf("%s: %q has %d segments, the font %d", name, c, len(sb), len(sa))
				}
				for i := range sa {
					if sa[i] != sb[i] {
						t.Fatalf("%s: %q differs at segment %d: %v, the font %v", name, c, i, sb[i], sa[i])
					}
				}
				aa, _ := a.GlyphAdvance(&bufA, ga, fixed.I(1000), font.HintingNone)
				ab, _ := b.GlyphAdvance(&bufB, gb, fixed.I(1000), font.HintingNone)
				if aa != ab {
					t.Fatalf("%s: %q advances %v, the font %v", name, c, ab, aa)
				}
				checked++
			}
		}
		if checked < 150 {
			t.Fatalf("%s: only %d characters checked", name, checked)
		}
		for _, c := range "ⴰ⠁∮" { // Tifinagh, Braille, a contour integral: in the font, not asked for
			if g, _ := a.GlyphIndex(&bufA, c); g == 0 {
				t.Fatalf("%s: %q is not in the font; pick another", name, c)
			}
			if g, _ := b.GlyphIndex(&bufB, c); g != 0 {
				t.Errorf("%s: %q was not asked for but is in the cut", name, c)
			}
		}
	}
}
