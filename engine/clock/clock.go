// Package clock is the portal's one source of the current time for
// everything that depends on the calendar: due dates, the default
// collection window, reminders, suspension, the archive, retention,
// mandate expiry, period windows, early-bird and late pricing, age groups.
//
// PORTAL_CLOCK moves it to another day for the whole process, as TZ moves
// time.Local: the engine's default clock, the handlers' and the commands'
// all read Now, so one setting moves them together. It exists so that the
// test suite can be run on any day of the calendar (make test-calendar) and
// a demo can be shown on a chosen day; serve logs a warning with the
// shifted time at start. The shifted clock keeps running: durations
// (session lifetimes, leases, timeouts) are what they would be without it.
package clock

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Env names the setting: a date (2026-12-06, meaning 10:00 UTC that day,
// inside the day in every European time zone) or an RFC 3339 instant
// (2026-12-31T23:30:00Z), read once when the process starts.
const Env = "PORTAL_CLOCK"

// shift is how far Now is from the wall clock, and shiftErr why
// PORTAL_CLOCK was refused (then Now is the wall clock).
var shift, shiftErr = Parse(os.Getenv(Env), time.Now())

// Now is the current time of the process, shifted by PORTAL_CLOCK when it
// is set.
func Now() time.Time { return time.Now().Add(shift) }

// Shifted reports whether PORTAL_CLOCK moved the clock.
func Shifted() bool { return shift != 0 }

// Err is why PORTAL_CLOCK could not be read; nil when it is unset or
// valid. The configuration refuses to start on it.
func Err() error { return shiftErr }

// Parse reads a PORTAL_CLOCK value as the shift from now: "" is none.
func Parse(raw string, now time.Time) (time.Duration, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, nil
	}
	at, err := Instant(raw)
	if err != nil {
		return 0, err
	}
	return at.Sub(now), nil
}

// Instant reads a date (10:00 UTC that day) or an RFC 3339 instant.
func Instant(raw string) (time.Time, error) {
	if d, err := time.Parse(time.DateOnly, raw); err == nil {
		return d.Add(10 * time.Hour), nil
	}
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s must be a date (2026-12-06) or an RFC 3339 instant (2026-12-06T10:00:00Z), not %q", Env, raw)
}
