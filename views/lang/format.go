package lang

import (
	"strings"
	"time"

	"golang.org/x/text/currency"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/number"
)

// Money writes an amount in minor units (cents) of a currency the way
// readers of the language and region expect: CHF 1’234.50 (de-CH),
// 1 234,50 CHF (fr-CH), 1.234,50 EUR (de-DE), EUR 1,234.50 (en); the
// code after the amount is bound to it by a no-break space.
func (l Language) Money(minor int64, code string) string {
	unit, err := currency.ParseISO(code)
	if err != nil {
		return strings.ToUpper(code) + " " + l.Number(float64(minor)/100, 2)
	}
	amount := l.Number(float64(minor)/100, 2)
	tag := l.tag()
	if b, _ := tag.Base(); b.String() == "en" || tag == language.MustParse("de-CH") || tag == language.MustParse("de-LI") {
		return unit.String() + " " + amount // the code before the amount: en, and German in Switzerland
	}
	return amount + "\u00a0" + unit.String()
}

// Number writes n with the language's separators and exactly decimals digits.
func (l Language) Number(n float64, decimals int) string {
	p := message.NewPrinter(l.tag())
	return p.Sprint(number.Decimal(n, number.Scale(decimals)))
}

// Date writes a calendar date: 1 March 2027, 1. März 2027, 1 mars 2027.
func (l Language) Date(d time.Time) string {
	switch l.Code {
	case "de":
		return d.Format("2.") + " " + germanMonths[d.Month()-1] + " " + d.Format("2006")
	case "fr":
		day := d.Format("2")
		if d.Day() == 1 {
			day = "1er"
		}
		return day + " " + frenchMonths[d.Month()-1] + " " + d.Format("2006")
	}
	return d.Format("2 January 2006")
}

var (
	germanMonths = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	frenchMonths = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
)

func (l Language) tag() language.Tag {
	if l.Tag == (language.Tag{}) {
		return language.Make(l.Code)
	}
	return l.Tag
}
