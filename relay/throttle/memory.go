package throttle

import (
	"context"
	"sync"
	"time"
)

// Memory keeps budgets in this process: right for one instance. Several
// instances each keep their own, so a guesser spread over them gets a
// budget per instance; use Redis for a cluster.
type Memory struct {
	now func() time.Time

	mu sync.Mutex
	// tat is GCRA's theoretical arrival time per key: when its budget is
	// full again. A key whose tat has passed is as good as absent.
	tat       map[string]time.Time
	sweepSize int
}

// NewMemory returns an empty in-memory Limiter on the wall clock.
func NewMemory() *Memory { return NewMemoryWithClock(time.Now) }

// NewMemoryWithClock returns an empty in-memory Limiter reading the time
// from now (tests move it instead of sleeping).
func NewMemoryWithClock(now func() time.Time) *Memory {
	return &Memory{now: now, tat: map[string]time.Time{}, sweepSize: 1024}
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, key string, l Limit) (Decision, error) {
	if !l.valid() {
		return Decision{}, ErrInvalidLimit
	}
	now := m.now()
	m.mu.Lock()
	tat := m.tat[key]
	m.mu.Unlock()
	return decide(max(tat.Sub(now), 0), l), nil
}

// Fail implements Limiter.
func (m *Memory) Fail(_ context.Context, key string, l Limit) error {
	if !l.valid() {
		return ErrInvalidLimit
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	tat := m.tat[key]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(l.interval())
	if next.Sub(now) > l.interval()*time.Duration(l.Burst) {
		return nil // over budget already: GCRA refuses, nothing changes
	}
	m.tat[key] = next
	if len(m.tat) >= m.sweepSize {
		m.sweep(now)
	}
	return nil
}

// sweep drops keys whose budget is full again. It runs when the map has
// doubled since the last sweep, so its cost is spread over the failures
// that grew the map, and memory stays bounded by the failures of one
// Period.
func (m *Memory) sweep(now time.Time) {
	for k, tat := range m.tat {
		if !tat.After(now) {
			delete(m.tat, k)
		}
	}
	m.sweepSize = max(1024, 2*len(m.tat))
}

// Len is the number of keys held, for tests.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}
