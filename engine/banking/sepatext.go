package banking

import "strings"

// SEPAText converts s to the SEPA basic Latin character set that every bank
// in the scheme must accept (a-z A-Z 0-9 / - ? : ( ) . , ' + space; EPC217-08
// "SEPA Requirements for an Extended Character Set", section 2) and cuts it
// to at most max runes (max <= 0: no limit). Letters outside it are
// converted one to one as the EPC217-08 conversion table does (ä→a, é→e,
// ß→s, æ→a, œ→o, ø→o, ł→l, č→c, ...); signs become their nearest allowed
// sign (& → +, _ → -, [ → ( ...) or a full stop; control characters
// become spaces, runs of spaces collapse and the ends are trimmed. Names
// and remittance texts in bank files go through it.
func SEPAText(s string, max int) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
		if max > 0 && n >= max {
			break
		}
		c := sepaRune(r)
		if c == " " {
			if b.Len() == 0 {
				continue
			}
			space = true
			continue
		}
		if space {
			if max > 0 && n+1 >= max {
				break
			}
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteString(c)
		n++
	}
	return b.String()
}

// sepaRune is the one-character replacement of r in the SEPA basic Latin
// set.
func sepaRune(r rune) string {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return string(r)
	case strings.ContainsRune("/-?:().,'+ ", r):
		return string(r)
	case r < 0x20 || r == 0x7f || r == 0xa0 || r == 0x2007 || r == 0x202f || (r >= 0x2000 && r <= 0x200a):
		return " "
	}
	if c, ok := sepaConversions[r]; ok {
		return c
	}
	return "."
}

// sepaConversions is the EPC217-08 conversion table's basic Latin column
// for the letters and signs of the European languages: every accented
// letter becomes its base letter, ligatures their first letter.
var sepaConversions = func() map[rune]string {
	m := map[rune]string{
		'&': "+", '"': "'", '`': "'", '´': "'", '‘': "'", '’': "'", '‚': "'", '“': "'", '”': "'", '„': "'", '«': "'", '»': "'",
		';': ",", '[': "(", '{': "(", ']': ")", '}': ")", '\\': "/", '|': "/", '_': "-", '~': "-",
		'–': "-", '—': "-", '¿': "?", '·': ".", '…': ".",
		'ß': "s", 'ẞ': "S", 'Æ': "A", 'æ': "a", 'Œ': "O", 'œ': "o", 'Ø': "O", 'ø': "o",
		'Þ': "b", 'þ': "p", 'Ð': "D", 'ð': "d", 'Ł': "L", 'ł': "l", 'Đ': "D", 'đ': "d",
		'Ħ': "H", 'ħ': "h", 'ı': "i", 'Ŀ': "L", 'ŀ': "l", 'Ŧ': "T", 'ŧ': "t", 'Ĳ': "I", 'ĳ': "i",
		'€': "E",
	}
	// Latin-1 Supplement and Latin Extended-A letters by base letter.
	for base, letters := range map[string]string{
		"A": "ÀÁÂÃÄÅĀĂĄ", "a": "àáâãäåāăą", "C": "ÇĆĈĊČ", "c": "çćĉċč", "D": "Ď", "d": "ď",
		"E": "ÈÉÊËĒĔĖĘĚ", "e": "èéêëēĕėęě", "G": "ĜĞĠĢ", "g": "ĝğġģ", "H": "Ĥ", "h": "ĥ",
		"I": "ÌÍÎÏĨĪĬĮİ", "i": "ìíîïĩīĭį", "J": "Ĵ", "j": "ĵ", "K": "Ķ", "k": "ķ",
		"L": "ĹĻĽ", "l": "ĺļľ", "N": "ÑŃŅŇ", "n": "ñńņň", "O": "ÒÓÔÕÖŌŎŐ", "o": "òóôõöōŏő",
		"R": "ŔŖŘ", "r": "ŕŗř", "S": "ŚŜŞŠȘ", "s": "śŝşšș", "T": "ŢŤȚ", "t": "ţťț",
		"U": "ÙÚÛÜŨŪŬŮŰŲ", "u": "ùúûüũūŭůűų", "W": "Ŵ", "w": "ŵ", "Y": "ÝŶŸ", "y": "ýÿŷ",
		"Z": "ŹŻŽ", "z": "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()
