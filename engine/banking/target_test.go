package banking

import (
	"testing"
	"time"
)

func TestEasterSunday(t *testing.T) {
	for y, want := range map[int]string{2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2038: "2038-04-25"} {
		if got := easterSunday(y).Format(time.DateOnly); got != want {
			t.Errorf("Easter %d = %s, want %s", y, got, want)
		}
	}
}

func TestTARGETBusinessDays(t *testing.T) {
	closed := []string{"2026-01-01", "2026-04-03", "2026-04-06", "2026-05-01", "2026-12-25", "2026-12-26", "2026-12-27", "2027-03-26", "2027-03-29"}
	open := []string{"2026-04-02", "2026-04-07", "2026-12-24", "2026-12-28", "2026-12-31", "2027-01-04", "2026-05-04"}
	for _, d := range closed {
		if IsTARGETBusinessDay(day(d)) {
			t.Errorf("%s is not a TARGET business day", d)
		}
	}
	for _, d := range open {
		if !IsTARGETBusinessDay(day(d)) {
			t.Errorf("%s is a TARGET business day", d)
		}
	}
	for from, want := range map[string]string{"2026-12-24": "2026-12-24", "2026-12-25": "2026-12-28", "2026-04-03": "2026-04-07", "2026-12-31": "2026-12-31", "2027-01-01": "2027-01-04"} {
		if got := NextTARGETBusinessDay(day(from).Add(15 * time.Hour)).Format(time.DateOnly); got != want {
			t.Errorf("NextTARGETBusinessDay(%s) = %s, want %s", from, got, want)
		}
	}
}
