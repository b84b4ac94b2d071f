package payment_test

import (
	"testing"
	"time"

	"portal/engine/payment"
)

func TestDebitDueDate(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name          string
		now           string
		prenotify, on int
		want          string
	}{
		{"14 days, any business day", "2027-03-01", 14, 0, "2027-03-15"},
		{"a Saturday moves to Monday", "2027-03-06", 14, 0, "2027-03-22"},
		{"default period when unset", "2027-03-01", 0, 0, "2027-03-15"},
		{"a shorter period the club states", "2027-03-01", 5, 0, "2027-03-08"},
		{"the collection day of this month", "2027-03-01", 14, 20, "2027-03-22"}, // 20 March 2027 is a Saturday
		{"the collection day of next month", "2027-03-10", 14, 5, "2027-04-05"},
		{"Good Friday (26 March 2027) and Easter Monday are no TARGET days", "2027-03-12", 14, 26, "2027-03-30"},
		{"over Easter", "2027-03-14", 14, 0, "2027-03-30"},
		{"over the year end", "2027-12-12", 14, 0, "2027-12-27"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := payment.DebitDueDate(day(tc.now).Add(15*time.Hour), tc.prenotify, tc.on)
			if got.Format(time.DateOnly) != tc.want {
				t.Errorf("DebitDueDate(%s, %d, %d) = %s, want %s", tc.now, tc.prenotify, tc.on, got.Format(time.DateOnly), tc.want)
			}
		})
	}
}
