package engine

import (
	"slices"
	"sync"
	"time"
)

// selectedCache keeps, per instance, the selected persons as of one
// instance version, so that a question step does not read them again: the
// selection only changes with a write that bumps the version, so an entry
// for the version just read is the selection of that version. Entries are
// written only after the transaction that produced the version committed.
//
// The persons' own records (name, date of birth) are not versioned by the
// instance: an edit made elsewhere during a registration is seen at the
// latest after selectedTTL, and always at the committing step, which reads
// them fresh because price and membership type depend on them.
type selectedCache struct {
	mu      sync.Mutex
	entries map[int64]selectedEntry
}

type selectedEntry struct {
	version int64
	persons []Person
	stored  time.Time
}

const (
	// selectedTTL bounds how long person records may be served from memory.
	selectedTTL = 5 * time.Minute
	// selectedMax bounds the memory: about one entry per registration
	// under way; past it the cache starts again empty.
	selectedMax = 10000
)

// get returns the selected persons of instanceID at version, or false.
func (c *selectedCache) get(instanceID, version int64, ids []int64) ([]Person, bool) {
	c.mu.Lock()
	e, ok := c.entries[instanceID]
	c.mu.Unlock()
	if !ok || e.version != version || time.Since(e.stored) > selectedTTL || len(e.persons) != len(ids) {
		return nil, false
	}
	for i, p := range e.persons {
		if p.ID != ids[i] {
			return nil, false
		}
	}
	return e.persons, true
}

// put records the selected persons of instanceID at version (after commit).
func (c *selectedCache) put(instanceID, version int64, persons []Person) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= selectedMax {
		c.entries = make(map[int64]selectedEntry)
	}
	c.entries[instanceID] = selectedEntry{version: version, persons: slices.Clip(persons), stored: time.Now()}
}

// drop forgets instanceID (its registration was committed).
func (c *selectedCache) drop(instanceID int64) {
	c.mu.Lock()
	delete(c.entries, instanceID)
	c.mu.Unlock()
}
