package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestCacheConformance(t *testing.T) {
	t.Run("memory bus", func(t *testing.T) {
		sessiontest.RunCacheConformance(t, func(t *testing.T) (session.Store, session.Bus, session.Bus) {
			hub := &sessiontest.MemHub{}
			return dbStore(t), hub.NewBus(), hub.NewBus()
		})
	})
	t.Run("redis", func(t *testing.T) {
		rdb := sessiontest.Redis(t)
		sessiontest.RunCacheConformance(t, func(t *testing.T) (session.Store, session.Bus, session.Bus) {
			prefix := sessiontest.RedisPrefix(t, rdb)
			a, b := session.NewRedisBus(rdb, prefix), session.NewRedisBus(rdb, prefix)
			t.Cleanup(func() { a.Close(); b.Close() })
			return session.NewRedisStore(rdb, session.RedisPrefix(prefix)), a, b
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dbtest.SkipWithoutPostgres(t)
		sessiontest.RunCacheConformance(t, func(t *testing.T) (session.Store, session.Bus, session.Bus) {
			db := dbtest.Postgres(t)
			// The default channel: the sessions table's trigger announces there.
			a, b := session.NewPGBus(db, ""), session.NewPGBus(db, "")
			t.Cleanup(func() { a.Close(); b.Close() })
			return session.NewDBStore(db), a, b
		})
	})
}

// blockingStore holds Load until released, to line a load up against an
// invalidation.
type blockingStore struct {
	session.Store
	mu      sync.Mutex
	entered chan struct{}
	release chan struct{}
}

func (s *blockingStore) Load(ctx context.Context, id string) (*session.Session, error) {
	s.mu.Lock()
	entered, release := s.entered, s.release
	s.mu.Unlock()
	if entered == nil {
		return s.Store.Load(ctx, id)
	}
	got, err := s.Store.Load(ctx, id) // the old state: the write comes after
	close(entered)
	<-release
	return got, err
}

func (s *blockingStore) hold() (entered, release chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entered, s.release = make(chan struct{}), make(chan struct{})
	return s.entered, s.release
}

func (s *blockingStore) stopHolding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entered, s.release = nil, nil
}

// A load that read the store before another instance's write, and finishes
// after that write's invalidation arrived, must not enter the cache: it
// would serve the old state until the TTL ran out.
func TestCacheRejectsLoadThatRacedAnInvalidation(t *testing.T) {
	hub := &sessiontest.MemHub{}
	base := &blockingStore{Store: dbStore(t)}
	counting := &sessiontest.CountingStore{Store: base}
	cfg := session.CacheConfig{TTL: time.Hour, PingEvery: 200 * time.Millisecond}
	ca, cb := session.NewCache(hub.NewBus(), cfg), session.NewCache(hub.NewBus(), cfg)
	sessiontest.StartCache(t, ca)
	sessiontest.StartCache(t, cb)
	a := session.NewManager(counting, session.Config{Cache: ca})
	b := session.NewManager(counting, session.Config{Cache: cb})
	s, _ := start(t, b, "user-1", map[string]string{session.AttrBackendJWT: "old"})
	cookie := &http.Cookie{Name: session.DefaultCookieName, Value: s.ID}
	get := func(m *session.Manager) (*session.Session, error) {
		return m.Get(context.Background(), request(cookie))
	}

	entered, release := base.hold()
	type result struct {
		s   *session.Session
		err error
	}
	done := make(chan result)
	go func() { s, err := get(a); done <- result{s, err} }()
	<-entered // A has read "old" and not yet cached it
	base.stopHolding()

	invalidations := ca.Stats().Invalidations
	fresh, err := b.Lookup(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh.Values[session.AttrBackendJWT] = "new"
	if err := b.Save(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	sessiontest.WaitFor(t, 2*time.Second, "A to receive the invalidation", func() bool {
		return ca.Stats().Invalidations > invalidations
	})
	close(release)
	if r := <-done; r.err != nil || r.s.Values[session.AttrBackendJWT] != "old" {
		t.Fatalf("the raced load = %v, %v; want the old state", r.s, r.err)
	}
	got, err := get(a)
	if err != nil || got.Values[session.AttrBackendJWT] != "new" {
		t.Fatalf("after the raced load A serves %v, %v; want the saved value", got, err)
	}
}

// A cache whose bus fails serves nothing, so it cannot miss a logout: every
// read goes to the store until the bus is back.
func TestCacheOfflineReadsTheStore(t *testing.T) {
	hub := &sessiontest.MemHub{}
	bus := hub.NewBus()
	counting := &sessiontest.CountingStore{Store: dbStore(t)}
	c := session.NewCache(bus, session.CacheConfig{TTL: time.Hour, PingEvery: 50 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(counting, session.Config{Cache: c})
	s, _ := start(t, m, "user-1", nil)
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s.ID})
	reads := func(n int) int {
		before := counting.Loads()
		for range n {
			if _, err := m.Get(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		return counting.Loads() - before
	}
	if n := reads(5); n != 1 {
		t.Fatalf("online: 5 reads made %d loads, want 1", n)
	}

	bus.Break(true)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to go offline", func() bool { return !c.Online() })
	if n := reads(5); n != 5 {
		t.Fatalf("offline: 5 reads made %d loads, want 5", n)
	}
	// A logout published elsewhere while this bus is down is lost to it;
	// coming back online must not serve what was cached before.
	other := session.NewManager(counting, session.Config{})
	if err := other.Delete(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	bus.Break(false)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to come back", c.Online)
	if _, err := m.Get(context.Background(), r); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after the outage Get = %v, want ErrNotFound", err)
	}
}

// A ping that does not come back (a subscription that is silently dead)
// takes the cache offline, though Publish still works.
func TestCacheOfflineWhenPingsAreLost(t *testing.T) {
	hub := &sessiontest.MemHub{}
	listen := hub.NewBus()
	bus := &deafBus{Bus: listen}
	c := session.NewCache(bus, session.CacheConfig{PingEvery: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	// Each attempt to come online publishes one ping and gives up after
	// three ping intervals; a third ping means two attempts failed.
	online := false
	sessiontest.WaitFor(t, 5*time.Second, "three unanswered pings", func() bool {
		online = online || c.Online()
		return bus.pings.Load() >= 3
	})
	if online || c.Online() {
		t.Fatal("a cache whose pings never come back is online")
	}
}

// deafBus publishes but never receives anything. It counts what it publishes.
type deafBus struct {
	session.Bus
	pings atomic.Int32
}

func (b *deafBus) Publish(context.Context, string) error { b.pings.Add(1); return nil }

func (*deafBus) Receive(_ context.Context, timeout time.Duration) (string, error) {
	time.Sleep(timeout)
	return "", session.ErrBusQuiet
}

// Writes invalidate the local cache even when the bus is gone, and report
// the failure: other instances may not have heard of a logout.
func TestCacheInvalidateReportsBusFailure(t *testing.T) {
	hub := &sessiontest.MemHub{}
	bus := hub.NewBus()
	c := session.NewCache(bus, session.CacheConfig{TTL: time.Hour, PingEvery: 50 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(dbStore(t), session.Config{Cache: c})
	s, _ := start(t, m, "user-1", nil)
	bus.Break(true)
	err := m.Delete(context.Background(), s.ID)
	if !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("Delete with a broken bus = %v, want ErrUnavailable", err)
	}
	if _, err := m.Lookup(context.Background(), s.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("the session survived the delete: %v", err)
	}
}

// PostgreSQL ending the listener's connection (a restart, a failover, an
// idle-connection killer) takes the cache offline at once, and it comes
// back by itself on a new connection.
func TestPGBusRecoversFromLostConnection(t *testing.T) {
	dbtest.SkipWithoutPostgres(t)
	db := dbtest.Postgres(t)
	channel := "test_" + strings.ToLower(sessiontest.NewID()[:10])
	bus := session.NewPGBus(db, channel)
	t.Cleanup(func() { bus.Close() })
	c := session.NewCache(bus, session.CacheConfig{PingEvery: 100 * time.Millisecond})
	sessiontest.StartCache(t, c)

	var killed int
	if err := db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = ?`, `LISTEN "`+channel+`"`).Scan(context.Background(), &killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listener connections, want 1", killed)
	}
	// pgdriver reconnects at once, so the outage may be too short to
	// observe as a state: count it instead.
	sessiontest.WaitFor(t, 2*time.Second, "the cache to go offline", func() bool { return c.Stats().Outages == 1 })
	sessiontest.WaitFor(t, 5*time.Second, "the cache to come back online", c.Online)
}

// Entries past their TTL are dropped, not just ignored: a session nobody
// uses any more does not keep its tokens in memory.
func TestCacheSweepsStaleEntries(t *testing.T) {
	hub := &sessiontest.MemHub{}
	c := session.NewCache(hub.NewBus(), session.CacheConfig{TTL: 50 * time.Millisecond, PingEvery: 20 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(dbStore(t), session.Config{Cache: c})
	s, _ := start(t, m, "user-1", map[string]string{session.AttrBackendJWT: "jwt"})
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s.ID})
	if _, err := m.Get(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if n := c.Stats().Entries; n != 1 {
		t.Fatalf("%d entries after a read, want 1", n)
	}
	sessiontest.WaitFor(t, 2*time.Second, "the stale entry to be swept", func() bool { return c.Stats().Entries == 0 })
}

// A subscription made anew behind the cache's back (a client library that
// reconnected by itself) may have missed invalidations: the cache empties,
// goes offline and proves the subscription again.
func TestCacheResubscriptionTakesItOffline(t *testing.T) {
	hub := &sessiontest.MemHub{}
	bus := hub.NewBus()
	c := session.NewCache(bus, session.CacheConfig{TTL: time.Hour, PingEvery: 50 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(dbStore(t), session.Config{Cache: c})
	s, _ := start(t, m, "user-1", nil)
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s.ID})
	if _, err := m.Get(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	bus.Resubscribe()
	sessiontest.WaitFor(t, 2*time.Second, "the cache to go offline", func() bool { return c.Stats().Outages == 1 })
	if n := c.Stats().Entries; n != 0 {
		t.Fatalf("%d entries survived the resubscription", n)
	}
	sessiontest.WaitFor(t, 2*time.Second, "the cache to come back online", c.Online)
}

// A cache that was online and whose subscription then dies without an error
// (its pings stop coming back) goes offline.
func TestCacheOfflineWhenPingsStopComingBack(t *testing.T) {
	hub := &sessiontest.MemHub{}
	bus := hub.NewBus()
	c := session.NewCache(bus, session.CacheConfig{PingEvery: 20 * time.Millisecond})
	sessiontest.StartCache(t, c)
	bus.Deafen(true)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to go offline", func() bool { return c.Stats().Outages == 1 })
	if c.Online() {
		t.Fatal("a deaf subscription came back online")
	}
	bus.Deafen(false)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to come back online", c.Online)
}

// A load that read the store while the cache was offline, and finishes
// once it is online again, must not enter the cache: invalidations were
// missed meanwhile.
func TestCacheRejectsLoadFromBeforeComingOnline(t *testing.T) {
	hub := &sessiontest.MemHub{}
	bus := hub.NewBus()
	base := &blockingStore{Store: dbStore(t)}
	c := session.NewCache(bus, session.CacheConfig{TTL: time.Hour, PingEvery: 20 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(base, session.Config{Cache: c})
	s, _ := start(t, m, "user-1", nil)
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s.ID})

	bus.Break(true)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to go offline", func() bool { return !c.Online() })
	entered, release := base.hold()
	done := make(chan error)
	go func() { _, err := m.Get(context.Background(), r); done <- err }()
	<-entered // read the session, not yet returned
	base.stopHolding()
	// A logout elsewhere, its announcement lost to the broken bus.
	if err := session.NewManager(base, session.Config{}).Delete(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	bus.Break(false)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to come back online", c.Online)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(context.Background(), r); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after coming online the cache served a session deleted while it was offline: %v", err)
	}
}

// go-redis reconnects a subscription by itself; RedisBus reports the error
// of the lost connection and then the new subscription, so the cache
// proves the subscription again instead of trusting a gap.
func TestRedisBusReportsResubscription(t *testing.T) {
	sessiontest.Redis(t)
	name := "portal-test-bus-" + strings.ToLower(sessiontest.NewID()[:8])
	rdb, err := session.NewRedisClient(os.Getenv(sessiontest.EnvRedis))
	if err != nil {
		t.Fatal(err)
	}
	rdb.Options().ClientName = name
	t.Cleanup(func() { rdb.Close() })
	bus := session.NewRedisBus(rdb, sessiontest.RedisPrefix(t, rdb))
	t.Cleanup(func() { bus.Close() })
	ctx := context.Background()
	if _, err := bus.Receive(ctx, time.Second); !errors.Is(err, session.ErrBusResubscribed) {
		t.Fatalf("first Receive = %v, want the subscription confirmed", err)
	}
	// Kill our subscriber connection only: other tests share this Redis.
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " name="+name+" ") && strings.Contains(line, " sub=1 ") {
			for _, f := range strings.Fields(line) {
				if id, ok := strings.CutPrefix(f, "id="); ok {
					if err := rdb.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
						t.Fatal(err)
					}
					killed++
				}
			}
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d subscriber connections, want 1:\n%s", killed, list)
	}
	sawError := false
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		_, err := bus.Receive(ctx, 200*time.Millisecond)
		switch {
		case errors.Is(err, session.ErrBusResubscribed):
			if !sawError {
				t.Fatal("resubscribed without reporting the lost connection first")
			}
			return
		case errors.Is(err, session.ErrBusQuiet), err == nil:
		default:
			sawError = true
		}
	}
	t.Fatal("the bus never reported the new subscription")
}

// Invalidations are per session: a write of another session while a load
// is in flight does not keep that load out of the cache (with busy
// instances, some session is always being touched).
func TestCacheInvalidationOfAnotherSessionKeepsLoad(t *testing.T) {
	hub := &sessiontest.MemHub{}
	base := &blockingStore{Store: dbStore(t)}
	counting := &sessiontest.CountingStore{Store: base}
	c := session.NewCache(hub.NewBus(), session.CacheConfig{TTL: time.Hour, PingEvery: 50 * time.Millisecond})
	sessiontest.StartCache(t, c)
	m := session.NewManager(counting, session.Config{Cache: c})
	s1, _ := start(t, m, "user-1", nil)
	s2, _ := start(t, m, "user-2", nil)
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s1.ID})

	entered, release := base.hold()
	done := make(chan error)
	go func() { _, err := m.Get(context.Background(), r); done <- err }()
	<-entered
	base.stopHolding()
	other, err := m.Lookup(context.Background(), s2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	loads := counting.Loads()
	if _, err := m.Get(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if counting.Loads() != loads {
		t.Fatal("a write of another session kept the load out of the cache")
	}
}

// On a store only this process writes (SQLite under serve's lock), the
// cache runs on a LocalBus: the Manager's own writes evict at once, so a
// logout or a save is seen by the very next request, while reads of an
// unchanged session skip the store.
func TestCacheOnLocalBus(t *testing.T) {
	counting := &sessiontest.CountingStore{Store: dbStore(t)}
	c := session.NewCache(session.NewLocalBus(), session.CacheConfig{TTL: time.Hour, PingEvery: 50 * time.Millisecond})
	sessiontest.StartCache(t, c)
	sessiontest.WaitFor(t, 2*time.Second, "the cache to come online", c.Online)
	m := session.NewManager(counting, session.Config{Cache: c})
	s, _ := start(t, m, "user-1", map[string]string{"k": "old"})
	r := request(&http.Cookie{Name: session.DefaultCookieName, Value: s.ID})
	get := func() (*session.Session, error) { return m.Get(context.Background(), r) }
	before := counting.Loads()
	for range 5 {
		if _, err := get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := counting.Loads() - before; n != 1 {
		t.Fatalf("5 reads made %d loads, want 1", n)
	}

	got, err := get()
	if err != nil {
		t.Fatal(err)
	}
	got.Values["k"] = "new" // a token refresh, say
	if err := m.Save(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if got, err := get(); err != nil || got.Values["k"] != "new" {
		t.Fatalf("after Save: %v, %v; want the new value at once", got, err)
	}

	if err := m.Delete(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := get(); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after logout Get = %v, want ErrNotFound at once", err)
	}
}

// A LocalBus that dropped messages (its queue full) says so, and the cache
// empties itself and proves the bus again instead of trusting its entries.
func TestLocalBusOverflowReportsResubscription(t *testing.T) {
	bus := session.NewLocalBus()
	for i := range 5000 {
		if err := bus.Publish(context.Background(), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bus.Receive(context.Background(), time.Second); !errors.Is(err, session.ErrBusResubscribed) {
		t.Fatalf("Receive after an overflow = %v, want ErrBusResubscribed", err)
	}
	if msg, err := bus.Receive(context.Background(), time.Second); err != nil || msg != "0" {
		t.Fatalf("then Receive = %q, %v; want the first message queued", msg, err)
	}
}
