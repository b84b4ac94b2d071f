package privacy

import (
	"testing"
	"time"

	"portal/engine/definition"
)

// TestCoarseBirthDateKeepsEveryAge: the erased birth date gives the same
// age as the real one on each of the club's period starts, whatever the
// day of birth, and never keeps the day when a period start lies between
// 1 January and the birthday.
func TestCoarseBirthDateKeepsEveryAge(t *testing.T) {
	starts := []time.Time{
		time.Date(2025, time.September, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, time.September, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, time.January, 15, 0, 0, 0, 0, time.UTC),
		time.Date(2024, time.March, 31, 0, 0, 0, 0, time.UTC),
	}
	for day := time.Date(2010, time.January, 1, 0, 0, 0, 0, time.UTC); day.Year() == 2010; day = day.AddDate(0, 0, 1) {
		c := coarseBirthDate(day, starts)
		if c.Year() != day.Year() {
			t.Fatalf("%s became %s: another year", day.Format(time.DateOnly), c.Format(time.DateOnly))
		}
		for _, s := range starts {
			if definition.AgeAt(c, s) != definition.AgeAt(day, s) {
				t.Fatalf("%s became %s: age on %s %d, want %d", day.Format(time.DateOnly), c.Format(time.DateOnly), s.Format(time.DateOnly), definition.AgeAt(c, s), definition.AgeAt(day, s))
			}
		}
	}
	if c := coarseBirthDate(time.Date(2010, time.July, 19, 0, 0, 0, 0, time.UTC), starts); c.Format(time.DateOnly) != "2010-04-01" {
		t.Fatalf("19 July 2010 became %s, want 2010-04-01 (the day after 31 March)", c.Format(time.DateOnly))
	}
	if c := coarseBirthDate(time.Date(2010, time.January, 9, 0, 0, 0, 0, time.UTC), starts); c.Format(time.DateOnly) != "2010-01-01" {
		t.Fatalf("9 January 2010 became %s, want 2010-01-01", c.Format(time.DateOnly))
	}
}
