package clock_test

import (
	"os"
	"testing"
	"time"

	"portal/engine/clock"
)

func TestParse(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, raw string
		want      time.Duration
		bad       bool
	}{
		{"unset", "", 0, false},
		{"a date is 10:00 UTC that day", "2026-12-24", 18*24*time.Hour + 3*time.Hour, false},
		{"spaces around", " 2026-12-06 ", 3 * time.Hour, false},
		{"an instant", "2026-12-31T23:30:00+01:00", 25*24*time.Hour + 15*time.Hour + 30*time.Minute, false},
		{"the past", "2026-12-05", -21 * time.Hour, false},
		{"not a date", "tomorrow", 0, true},
		{"no such day", "2027-02-29", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := clock.Parse(tc.raw, now)
			if tc.bad {
				if err == nil {
					t.Fatalf("%q was accepted", tc.raw)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %s, %v; want %s", tc.raw, got, err, tc.want)
			}
		})
	}
}

// TestNow: without PORTAL_CLOCK (as go test runs this package unless the
// calendar sweep sets it) the clock is the wall clock; with it, the day
// asked for.
func TestNow(t *testing.T) {
	t.Parallel()
	raw := os.Getenv(clock.Env)
	if raw == "" {
		if clock.Shifted() || time.Until(clock.Now()).Abs() > time.Second {
			t.Fatalf("unset, yet the clock is shifted to %s", clock.Now())
		}
		return
	}
	want, err := clock.Instant(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := clock.Now(); got.Before(want) || got.Sub(want) > time.Hour {
		t.Fatalf("%s=%s, yet the clock says %s", clock.Env, raw, got)
	}
}
