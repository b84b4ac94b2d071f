package directdebit_test

import (
	"testing"
	"time"

	"portal/engine/banking"
	"portal/engine/directdebit"
	"portal/engine/payment"
)

// TestCalendarProperty holds the due dates and the default collection
// window to the calendar on every day of 2026 to 2028, at any hour of the
// day: the due date of a mandate given that day is a TARGET business day
// at least the pre-notification period later (on the collection day when
// the club has one, or the next business day after it), and a run
// prepared that day without a date takes it whenever the bank would
// accept it in that run's file (due within DefaultCollectionHorizon, the
// business day after a horizon that ends on a closed day included).
func TestCalendarProperty(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
	for day := start; day.Before(end); day = day.AddDate(0, 0, 1) {
		for _, hour := range []int{0, 10, 23} {
			now := day.Add(time.Duration(hour)*time.Hour + 59*time.Minute)
			until := directdebit.DefaultCollectionUntil(now)
			if !banking.IsTARGETBusinessDay(until) {
				t.Fatalf("%s: the default window ends on %s, not a TARGET business day", now, until.Format(time.DateOnly))
			}
			horizon := day.Add(directdebit.DefaultCollectionHorizon)
			if until.Before(horizon) || until.Sub(horizon) > 5*24*time.Hour {
				t.Fatalf("%s: the default window ends on %s, not the first business day on or after %s", now, until.Format(time.DateOnly), horizon.Format(time.DateOnly))
			}
			for _, prenotify := range []int{0, 1, 5, 14} {
				for _, collectionDay := range []int{0, 1, 15, 28} {
					due := payment.DebitDueDate(now, prenotify, collectionDay)
					days := prenotify
					if days == 0 {
						days = payment.DefaultPrenotificationDays
					}
					if !banking.IsTARGETBusinessDay(due) {
						t.Fatalf("%s (%d days, day %d): due on %s, not a TARGET business day", now, prenotify, collectionDay, due.Format(time.DateOnly))
					}
					if due.Before(day.AddDate(0, 0, days)) {
						t.Fatalf("%s (%d days, day %d): due on %s, before the pre-notification period ends", now, prenotify, collectionDay, due.Format(time.DateOnly))
					}
					if collectionDay == 0 && due.After(until) {
						t.Fatalf("%s (%d days): due on %s, after the default window (%s) of a run prepared that day", now, prenotify, due.Format(time.DateOnly), until.Format(time.DateOnly))
					}
					if collectionDay != 0 && !due.After(horizon) && due.After(until) {
						t.Fatalf("%s (day %d): due on %s within the horizon, left out of the default window (%s)", now, collectionDay, due.Format(time.DateOnly), until.Format(time.DateOnly))
					}
				}
			}
		}
	}
}

// TestDefaultCollectionUntilOnClosedDays names the days the issue found:
// prepared on a Sunday, a run takes the Monday two weeks later.
func TestDefaultCollectionUntilOnClosedDays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ now, want string }{
		{"2026-12-06", "2026-12-21"}, // Sunday: the 20th is a Sunday
		{"2026-12-05", "2026-12-21"}, // Saturday: the 19th is a Saturday
		{"2026-12-07", "2026-12-21"}, // Monday
		{"2026-12-11", "2026-12-28"}, // 25th (Friday) is closed, then the weekend
		{"2026-12-12", "2026-12-28"}, // 26th, Saturday
		{"2027-03-12", "2027-03-30"}, // Good Friday is 26 March 2027, Easter Monday the 29th
		{"2027-03-13", "2027-03-30"},
	} {
		now, err := time.Parse(time.DateOnly, tc.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := directdebit.DefaultCollectionUntil(now.Add(9 * time.Hour)).Format(time.DateOnly); got != tc.want {
			t.Errorf("prepared on %s: until %s, want %s", tc.now, got, tc.want)
		}
	}
}
