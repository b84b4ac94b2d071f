package enginetest

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand (engine.WithClock(c.Now)), safe
// for the goroutines of the service it is given to.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
