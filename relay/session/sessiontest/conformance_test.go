package sessiontest

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"portal/relay/session"
)

// The conformance suites are what holds every session store to one contract,
// so they are tested themselves: a store that keeps the contract passes both,
// and each store below that breaks one rule of it must make them fail. A
// suite that passed a broken store would let a real store's bug through.

// flaw names one rule a memStore breaks; "" keeps them all.
type flaw string

const (
	keepsCallerMaps      flaw = "keeps the caller's maps"
	loadsExpired         flaw = "loads expired sessions"
	overwritesDuplicate  flaw = "overwrites a duplicate id"
	acceptsEmptyID       flaw = "accepts an empty id"
	saveRevivesExpired   flaw = "save revives an expired session"
	saveRewritesCreated  flaw = "save rewrites created at"
	deleteExpiredTakeAll flaw = "delete expired removes live sessions"
	touchRewritesValues  flaw = "touch puts back old values"
	leaseNeverExpires    flaw = "a lease never runs out"
	staleReleaseFrees    flaw = "a stale release frees the new holder's lease"
	leaseNotExclusive    flaw = "a held lease is given again"
	localTimes           flaw = "times come back in local time"
)

// memStore is a session store in memory that keeps the contract unless it
// is told to break one rule of it.
type memStore struct {
	flaw     flaw
	mu       sync.Mutex
	sessions map[string]session.Session
	touched  map[string]session.Session // what a read saw, for touchRewritesValues
	leases   map[string]lease
}

type lease struct {
	token   int
	expires time.Time
}

func newMemStore(f flaw) *memStore {
	return &memStore{flaw: f, sessions: map[string]session.Session{}, touched: map[string]session.Session{}, leases: map[string]lease{}}
}

func (m *memStore) Create(_ context.Context, s *session.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.ID == "" && m.flaw != acceptsEmptyID {
		return errors.New("memstore: empty id")
	}
	if _, ok := m.sessions[s.ID]; ok && m.flaw != overwritesDuplicate {
		return errors.New("memstore: duplicate id")
	}
	m.sessions[s.ID] = m.copyOf(s)
	return nil
}

func (m *memStore) Load(_ context.Context, id string) (*session.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || (!s.ExpiresAt.After(time.Now()) && m.flaw != loadsExpired) {
		return nil, session.ErrNotFound
	}
	m.touched[id] = s
	out := m.copyOf(&s)
	if m.flaw == localTimes {
		out.CreatedAt = out.CreatedAt.In(time.FixedZone("elsewhere", 3600))
	}
	return &out, nil
}

func (m *memStore) Save(_ context.Context, s *session.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.sessions[s.ID]
	if !ok || (!old.ExpiresAt.After(time.Now()) && m.flaw != saveRevivesExpired) {
		return session.ErrNotFound
	}
	saved := m.copyOf(s)
	if m.flaw != saveRewritesCreated {
		saved.CreatedAt = old.CreatedAt
	}
	m.sessions[s.ID] = saved
	return nil
}

func (m *memStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

func (m *memStore) DeleteExpired(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, s := range m.sessions {
		if s.ExpiresAt.Before(now) || m.flaw == deleteExpiredTakeAll {
			delete(m.sessions, id)
			n++
		}
	}
	return n, nil
}

func (m *memStore) Touch(_ context.Context, id string, lastSeenAt, expiresAt time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || !s.ExpiresAt.After(time.Now()) {
		return session.ErrNotFound
	}
	if seen, ok := m.touched[id]; ok && m.flaw == touchRewritesValues {
		s.Values = seen.Values // writes back what the read saw, as a whole-row save would
	}
	s.LastSeenAt, s.ExpiresAt = lastSeenAt.UTC(), expiresAt.UTC()
	m.sessions[id] = s
	return nil
}

func (m *memStore) TryLock(_ context.Context, id string, ttl time.Duration) (func(context.Context) error, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	held, ok := m.leases[id]
	if ok && (held.expires.After(now) || m.flaw == leaseNeverExpires) && m.flaw != leaseNotExclusive {
		return nil, false, nil
	}
	mine := lease{token: held.token + 1, expires: now.Add(ttl)}
	m.leases[id] = mine
	release := func(context.Context) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if cur, ok := m.leases[id]; ok && (cur.token == mine.token || m.flaw == staleReleaseFrees) {
			delete(m.leases, id)
		}
		return nil
	}
	return release, true, nil
}

// copyOf returns s with its own Values map and UTC times, unless the store
// is to keep the caller's map.
func (m *memStore) copyOf(s *session.Session) session.Session {
	out := *s
	if m.flaw != keepsCallerMaps {
		out.Values = maps.Clone(s.Values)
	}
	if out.Values == nil {
		out.Values = map[string]string{}
	}
	out.CreatedAt, out.LastSeenAt, out.ExpiresAt = out.CreatedAt.UTC(), out.LastSeenAt.UTC(), out.ExpiresAt.UTC()
	return out
}

// flawEnv carries the flaw into the child process that runs the suites
// against a broken store.
const flawEnv = "SESSIONTEST_FLAW"

func TestConformancePassesAStoreThatKeepsTheContract(t *testing.T) {
	if f := os.Getenv(flawEnv); f != "" {
		// The child's run: the suites against a store with one flaw, which must fail.
		newStore := func(*testing.T) SharedStore { return newMemStore(flaw(f)) }
		RunStoreConformance(t, func(t *testing.T) session.Store { return newStore(t) })
		RunSharedStoreConformance(t, newStore)
		return
	}
	RunStoreConformance(t, func(*testing.T) session.Store { return newMemStore("") })
	RunSharedStoreConformance(t, func(*testing.T) SharedStore { return newMemStore("") })
}

func TestConformanceFailsAStoreThatBreaksTheContract(t *testing.T) {
	if os.Getenv(flawEnv) != "" {
		t.Skip("the child process runs only the suites")
	}
	for _, f := range []flaw{
		keepsCallerMaps, loadsExpired, overwritesDuplicate, acceptsEmptyID, saveRevivesExpired,
		saveRewritesCreated, deleteExpiredTakeAll, touchRewritesValues, leaseNeverExpires,
		staleReleaseFrees, leaseNotExclusive, localTimes,
	} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConformancePassesAStoreThatKeepsTheContract$", "-test.count=1")
			cmd.Env = append(os.Environ(), flawEnv+"="+string(f))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suites passed a store that %s (err %v):\n%s", f, err, out)
			}
			if !strings.Contains(string(out), "--- FAIL") {
				t.Fatalf("the child run failed without a failing case (err %v):\n%s", err, out)
			}
		})
	}
}
