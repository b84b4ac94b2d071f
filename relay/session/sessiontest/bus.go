package sessiontest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"portal/relay/session"
)

// MemHub is an in-process Bus for tests: every MemBus made by one hub
// receives what any of them publishes.
type MemHub struct {
	mu   sync.Mutex
	subs []*MemBus
}

// MemBus is one subscriber of a MemHub. Break makes it fail like a lost
// connection, to take a cache offline on purpose.
type MemBus struct {
	hub    *MemHub
	ch     chan string
	mu     sync.Mutex
	broken bool
	deaf   bool
}

var errBroken = errors.New("sessiontest: bus connection lost")

// NewBus subscribes a new bus to the hub.
func (h *MemHub) NewBus() *MemBus {
	b := &MemBus{hub: h, ch: make(chan string, 1024)}
	h.mu.Lock()
	h.subs = append(h.subs, b)
	h.mu.Unlock()
	return b
}

// Break fails (true) or heals (false) this bus; while broken it neither
// sends nor receives, and what was published meanwhile is lost to it.
func (b *MemBus) Break(broken bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.broken = broken
}

// Deafen makes the bus drop what is published to it without any error, as
// a subscription that died silently would.
func (b *MemBus) Deafen(deaf bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deaf = deaf
}

func (b *MemBus) isDeaf() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.deaf
}

func (b *MemBus) isBroken() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// Publish delivers msg to every subscriber that is not broken.
func (b *MemBus) Publish(_ context.Context, msg string) error {
	if b.isBroken() {
		return errBroken
	}
	b.hub.mu.Lock()
	defer b.hub.mu.Unlock()
	for _, s := range b.hub.subs {
		if !s.isBroken() && !s.isDeaf() {
			s.ch <- msg
		}
	}
	return nil
}

// Receive returns the next message, session.ErrBusQuiet after timeout.
func (b *MemBus) Receive(ctx context.Context, timeout time.Duration) (string, error) {
	if b.isBroken() {
		time.Sleep(10 * time.Millisecond)
		return "", errBroken
	}
	select {
	case msg := <-b.ch:
		if b.isBroken() {
			return "", errBroken
		}
		if msg == resubscribed {
			return "", session.ErrBusResubscribed
		}
		return msg, nil
	case <-time.After(timeout):
		return "", session.ErrBusQuiet
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// resubscribed is queued by Resubscribe; Receive reports it as
// session.ErrBusResubscribed.
const resubscribed = "\x00resubscribed"

// Resubscribe makes the bus report a new subscription, as a client library
// that reconnected by itself would.
func (b *MemBus) Resubscribe() { b.ch <- resubscribed }

// Close does nothing: the hub goes away with the test.
func (b *MemBus) Close() error { return nil }

// CountingStore counts the loads that reach a store, to tell cache hits
// from store reads.
type CountingStore struct {
	session.Store
	mu    sync.Mutex
	loads int
}

// Load counts and loads.
func (s *CountingStore) Load(ctx context.Context, id string) (*session.Session, error) {
	s.mu.Lock()
	s.loads++
	s.mu.Unlock()
	return s.Store.Load(ctx, id)
}

// AnnouncesOn passes through what the wrapped store offers, as Touch and
// TryLock do; embedding alone would hide that it offers them.
func (s *CountingStore) AnnouncesOn(bus session.Bus) bool {
	a, ok := s.Store.(session.Announcer)
	return ok && a.AnnouncesOn(bus)
}

// Touch passes through to the wrapped store's Touch, else saves.
func (s *CountingStore) Touch(ctx context.Context, id string, lastSeenAt, expiresAt time.Time) error {
	if t, ok := s.Store.(session.Toucher); ok {
		return t.Touch(ctx, id, lastSeenAt, expiresAt)
	}
	sess, err := s.Store.Load(ctx, id)
	if err != nil {
		return err
	}
	sess.LastSeenAt, sess.ExpiresAt = lastSeenAt, expiresAt
	return s.Store.Save(ctx, sess)
}

// Loads reports how many loads reached the store.
func (s *CountingStore) Loads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads
}

// StartCache runs c until the test ends and waits until it is online.
func StartCache(t testing.TB, c *session.Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	WaitFor(t, 5*time.Second, "the session cache to come online", c.Online)
}

// WaitFor polls cond every 5 ms until it holds, failing the test after limit.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// RunCacheConformance checks that caches on two instances sharing a store
// stay coherent over a Bus: newInstances returns the shared store and one
// bus per instance. The caches' TTL is a minute, so only invalidations
// can make a change on one instance visible on the other in time.
func RunCacheConformance(t *testing.T, newInstances func(t *testing.T) (session.Store, session.Bus, session.Bus)) {
	var announces bool
	setup := func(t *testing.T) (a, b *session.Manager, ca, cb *session.Cache, store *CountingStore) {
		st, busA, busB := newInstances(t)
		an, ok := st.(session.Announcer)
		announces = ok && an.AnnouncesOn(busA) && an.AnnouncesOn(busB)
		store = &CountingStore{Store: st}
		cfg := session.CacheConfig{TTL: time.Minute, PingEvery: 200 * time.Millisecond}
		ca, cb = session.NewCache(busA, cfg), session.NewCache(busB, cfg)
		StartCache(t, ca)
		StartCache(t, cb)
		a = session.NewManager(store, session.Config{Cache: ca})
		b = session.NewManager(store, session.Config{Cache: cb})
		return a, b, ca, cb, store
	}
	login := func(t *testing.T, m *session.Manager, values map[string]string) *http.Cookie {
		t.Helper()
		rec := httptest.NewRecorder()
		s, err := m.Start(context.Background(), rec, httptest.NewRequest(http.MethodPost, "/", nil), "user-1", values)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Cookie{Name: session.DefaultCookieName, Value: s.ID}
	}
	get := func(m *session.Manager, c *http.Cookie) (*session.Session, error) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(c)
		return m.Get(context.Background(), r)
	}

	t.Run("repeated reads are served from memory", func(t *testing.T) {
		a, _, ca, _, store := setup(t)
		c := login(t, a, map[string]string{session.AttrBackendJWT: "jwt-1"})
		before := store.Loads()
		for range 10 {
			s, err := get(a, c)
			if err != nil || s.Values[session.AttrBackendJWT] != "jwt-1" {
				t.Fatalf("Get = %v, %v", s, err)
			}
			s.Values[session.AttrBackendJWT] = "changed by the caller" // must not reach the cache
		}
		if n := store.Loads() - before; n != 1 {
			t.Fatalf("10 reads made %d store loads, want 1", n)
		}
		if st := ca.Stats(); st.Hits < 9 {
			t.Fatalf("stats = %+v, want 9 hits", st)
		}
	})

	t.Run("a save on one instance reaches the other", func(t *testing.T) {
		a, b, _, _, _ := setup(t)
		c := login(t, a, map[string]string{session.AttrBackendJWT: "old"})
		if s, err := get(b, c); err != nil || s.Values[session.AttrBackendJWT] != "old" {
			t.Fatalf("Get on B = %v, %v", s, err)
		}
		s, err := get(a, c)
		if err != nil {
			t.Fatal(err)
		}
		s.Values[session.AttrBackendJWT] = "new"
		if err := a.Save(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		WaitFor(t, 2*time.Second, "B to see the saved value", func() bool {
			s, err := get(b, c)
			return err == nil && s.Values[session.AttrBackendJWT] == "new"
		})
	})

	t.Run("a store that announces its writes needs no Manager to announce them", func(t *testing.T) {
		a, b, _, _, store := setup(t)
		if !announces {
			t.Skip("the store does not announce its writes on this bus")
		}
		c := login(t, a, map[string]string{session.AttrBackendJWT: "old"})
		ctx := context.Background()
		// Written straight to the store, as a writer that died before any
		// publish of its own would leave it: a save, a touch, a delete.
		// Each time B has the session cached, and only the store's
		// announcement can make it see the write within the minute's TTL.
		heard := func(what string, write func(s *session.Session) error, seen func(s *session.Session, err error) bool) {
			t.Helper()
			s, err := get(b, c)
			if err != nil {
				t.Fatal(err)
			}
			if err := write(s); err != nil { // s is a copy: Get never hands out the cached one
				t.Fatal(err)
			}
			WaitFor(t, 2*time.Second, "B to hear of the "+what+" from the store", func() bool { return seen(get(b, c)) })
		}
		heard("save", func(s *session.Session) error {
			s.Values[session.AttrBackendJWT] = "new"
			return store.Store.Save(ctx, s)
		}, func(s *session.Session, err error) bool {
			return err == nil && s.Values[session.AttrBackendJWT] == "new"
		})
		var touchedTo time.Time
		heard("touch", func(s *session.Session) error {
			touchedTo = s.LastSeenAt.Add(time.Second)
			return store.Store.(session.Toucher).Touch(ctx, s.ID, touchedTo, s.ExpiresAt.Add(time.Second))
		}, func(s *session.Session, err error) bool { return err == nil && s.LastSeenAt.Equal(touchedTo) })
		heard("delete", func(s *session.Session) error { return store.Store.Delete(ctx, s.ID) },
			func(_ *session.Session, err error) bool { return errors.Is(err, session.ErrNotFound) })
	})

	t.Run("a logout on one instance ends the session on the other", func(t *testing.T) {
		a, b, _, _, _ := setup(t)
		c := login(t, a, nil)
		if _, err := get(a, c); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/logout", nil)
		r.AddCookie(c)
		if err := b.End(context.Background(), httptest.NewRecorder(), r); err != nil {
			t.Fatal(err)
		}
		WaitFor(t, 2*time.Second, "A to see the logout", func() bool {
			_, err := get(a, c)
			return errors.Is(err, session.ErrNotFound)
		})
	})
}
