package banking

import "time"

// IsTARGETBusinessDay reports whether the date of d is a TARGET2 business
// day, the days on which SEPA direct debits settle: Monday to Friday
// except New Year's Day, Good Friday, Easter Monday, 1 May and 25 and 26
// December. A collection's due date should be one (banks move a debit due
// on another day to the next one).
func IsTARGETBusinessDay(d time.Time) bool {
	switch d.Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	y, m, dd := d.Date()
	switch {
	case m == time.January && dd == 1, m == time.May && dd == 1,
		m == time.December && (dd == 25 || dd == 26):
		return false
	}
	easter := easterSunday(y)
	day := time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
	return !day.Equal(easter.AddDate(0, 0, -2)) && !day.Equal(easter.AddDate(0, 0, 1))
}

// NextTARGETBusinessDay returns the first TARGET2 business day on or
// after the date of d (at midnight in d's location).
func NextTARGETBusinessDay(d time.Time) time.Time {
	y, m, dd := d.Date()
	day := time.Date(y, m, dd, 0, 0, 0, 0, d.Location())
	for !IsTARGETBusinessDay(day) {
		day = day.AddDate(0, 0, 1)
	}
	return day
}

// easterSunday is the date of Easter Sunday (Gregorian calendar,
// the anonymous algorithm of Meeus, Jones and Butcher), in UTC.
func easterSunday(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}
