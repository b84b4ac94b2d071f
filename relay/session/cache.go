package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bus carries "this session changed" between the gateway instances that
// share a session store, so that each can keep a Cache of sessions that
// never outlives a write made elsewhere by more than the bus's delivery time.
// RedisBus (Redis PUBLISH/SUBSCRIBE), PGBus (PostgreSQL LISTEN/NOTIFY) and
// LocalBus (one process: SQLite under serve's lock) implement it; messages
// are ids hashed like the stores key them, never session tokens.
type Bus interface {
	// Publish sends msg to every subscriber, this instance's included.
	Publish(ctx context.Context, msg string) error
	// Receive waits up to timeout for the next message. It returns
	// ErrBusQuiet when none came in time, ErrBusResubscribed when the
	// subscription was made anew (messages may have been lost), and any
	// other error when the subscription is broken (the next call
	// reconnects).
	Receive(ctx context.Context, timeout time.Duration) (string, error)
	// Close ends the subscription.
	Close() error
}

var (
	// ErrBusQuiet means no message arrived within Receive's timeout.
	ErrBusQuiet = errors.New("session: no message on the bus")
	// ErrBusResubscribed means the subscription was (re)established: what
	// was published before may have been missed. The cache then proves the
	// subscription again before it serves anything.
	ErrBusResubscribed = errors.New("session: bus subscribed anew")
)

// Defaults of CacheConfig.
const (
	// DefaultCacheTTL bounds how long a cached session is served without
	// reading the store, should an invalidation be lost without the bus
	// noticing.
	DefaultCacheTTL = 5 * time.Second
	// DefaultCacheEntries bounds the memory the cache takes.
	DefaultCacheEntries = 20000
	// DefaultCachePingEvery is how often the cache proves its subscription
	// alive by receiving a message it published itself.
	DefaultCachePingEvery = time.Second
)

// CacheConfig tunes a Cache; zero fields take the defaults.
type CacheConfig struct {
	// TTL is the longest a session is served from memory without a read of
	// the store.
	TTL time.Duration
	// MaxEntries bounds the number of cached sessions.
	MaxEntries int
	// PingEvery is the health-check interval of the subscription; a ping
	// not back within three intervals takes the cache offline.
	PingEvery time.Duration
}

// Cache keeps recently loaded sessions in memory so that most requests of
// a busy session skip the store's round trip, while staying coherent with
// every other instance: every write of a session is announced with its id
// hash on the Bus, and every instance evicts what it receives. Stores that
// implement Announcer announce in the same atomic step as the write (a
// Redis script's PUBLISH, a PostgreSQL trigger's NOTIFY), so a writer that
// dies or loses its client in between cannot leave others stale; for other
// stores the Manager publishes after the write.
//
// The cache serves nothing unless its subscription is proven live: it
// publishes pings and must receive them back, and on any bus failure it
// drops every entry and reads the store again until the subscription is back.
// So a logout or a token refresh on one instance reaches the others within
// the bus's delivery time (milliseconds), and TTL bounds the damage of an
// invalidation lost without the bus noticing. Run must be running for the
// cache to come online.
type Cache struct {
	bus       Bus
	ttl       time.Duration
	max       int
	pingEvery time.Duration

	mu      sync.RWMutex
	entries map[string]cacheEntry // by id hash
	online  bool
	// A load that raced with an invalidation of its session must not enter
	// the cache: the store may have answered with what the invalidation
	// replaced. So begin hands out a ticket, and put compares it with:
	//   - gen, counting evictions, and evicted, the gen of each session's
	//     latest eviction (kept for evictionMemory; horizon is the latest
	//     gen forgotten, and older tickets are refused);
	//   - epoch, counting changes of online: invalidations may have been
	//     missed while offline.
	gen     uint64
	evicted map[string]eviction
	horizon uint64
	epoch   uint64

	hits, misses, invalidations, outages atomic.Uint64
}

type cacheEntry struct {
	s        *Session
	loadedAt time.Time
}

type eviction struct {
	gen uint64
	at  time.Time
}

// ticket is the cache's state when a load from the store began.
type ticket struct{ gen, epoch uint64 }

// evictionMemory is how long evictions are remembered for loads in flight;
// a load older than that is not cached.
const evictionMemory = time.Minute

// NewCache returns a cache fed by bus; it stays offline until Run has
// proven the subscription.
func NewCache(bus Bus, cfg CacheConfig) *Cache {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultCacheTTL
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultCacheEntries
	}
	if cfg.PingEvery <= 0 {
		cfg.PingEvery = DefaultCachePingEvery
	}
	return &Cache{bus: bus, ttl: cfg.TTL, max: cfg.MaxEntries, pingEvery: cfg.PingEvery,
		entries: map[string]cacheEntry{}, evicted: map[string]eviction{}}
}

// CacheStats are counters for metrics.
type CacheStats struct {
	// Outages counts the times the cache went offline.
	Hits, Misses, Invalidations, Outages uint64
	Entries                              int
	Online                               bool
}

// Stats reports the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Invalidations: c.invalidations.Load(), Outages: c.outages.Load(),
		Entries: len(c.entries), Online: c.online}
}

// Online reports whether the cache currently serves entries.
func (c *Cache) Online() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.online
}

// get returns a copy of the fresh entry for idHash.
func (c *Cache) get(idHash string) (*Session, bool) {
	c.mu.RLock()
	e, ok := c.entries[idHash]
	online := c.online
	c.mu.RUnlock()
	if !online || !ok || time.Since(e.loadedAt) >= c.ttl {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return e.s.clone(), true
}

// begin returns the ticket to hand to put after reading the store.
func (c *Cache) begin() ticket {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return ticket{gen: c.gen, epoch: c.epoch}
}

// put caches a copy of s, loaded from the store after begin returned t,
// unless the session was invalidated since or the cache went offline or
// online meanwhile.
func (c *Cache) put(idHash string, s *Session, t ticket, loadedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.online || t.epoch != c.epoch || t.gen < c.horizon || c.evicted[idHash].gen > t.gen {
		return
	}
	if _, ok := c.entries[idHash]; !ok && len(c.entries) >= c.max {
		for k := range c.entries { // map order is random: a random victim
			delete(c.entries, k)
			break
		}
	}
	c.entries[idHash] = cacheEntry{s: s.clone(), loadedAt: loadedAt}
}

// evict drops idHash here.
func (c *Cache) evict(idHash string) {
	c.mu.Lock()
	c.gen++
	if c.online { // offline, put refuses everything anyway
		c.evicted[idHash] = eviction{gen: c.gen, at: time.Now()}
	}
	delete(c.entries, idHash)
	c.mu.Unlock()
	c.invalidations.Add(1)
}

// invalidate evicts idHash here and tells the other instances to.
func (c *Cache) invalidate(ctx context.Context, idHash string) error {
	c.evict(idHash)
	if err := c.bus.Publish(ctx, idHash); err != nil {
		return unavailable("invalidate", err)
	}
	return nil
}

// setOnline empties the cache and turns it on or off. Either way nothing
// cached before stays: going offline, invalidations may be missed from now
// on; coming online, some may have been missed while offline.
func (c *Cache) setOnline(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.online && !on {
		c.outages.Add(1)
	}
	c.epoch++
	clear(c.entries)
	clear(c.evicted) // the epoch refuses every load in flight already
	c.horizon = c.gen
	c.online = on
}

// pingPrefix marks the cache's own health-check messages; id hashes are hex
// and never start with it.
const pingPrefix = "ping:"

// Run follows the bus until ctx ends: it brings the cache online once a
// ping of its own comes back, keeps it online while pings keep coming back,
// and takes it offline (empty, bypassed) as soon as the bus fails.
func (c *Cache) Run(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if c.connect(ctx) {
			backoff = 50 * time.Millisecond
			c.follow(ctx)
			c.setOnline(false)
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// connect proves the subscription end to end: it publishes a ping, again
// every 100 ms (a subscription still being set up may miss the first), and
// comes online when one is received, within three ping intervals.
func (c *Cache) connect(ctx context.Context) bool {
	token := newPing()
	deadline := time.Now().Add(3 * c.pingEvery)
	var sent time.Time
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if time.Since(sent) >= 100*time.Millisecond {
			if err := c.bus.Publish(ctx, token); err != nil {
				return false
			}
			sent = time.Now()
		}
		msg, err := c.bus.Receive(ctx, 100*time.Millisecond)
		switch {
		case err == nil && msg == token:
			c.setOnline(true)
			return true
		case err == nil:
			c.apply(msg)
		case errors.Is(err, ErrBusQuiet), errors.Is(err, ErrBusResubscribed):
			// Not online yet: a fresh subscription is what we are proving.
		default:
			return false
		}
	}
	return false
}

// follow applies invalidations until the bus fails or a ping is not back
// in time.
func (c *Cache) follow(ctx context.Context) {
	var pending string
	var sentAt time.Time
	for ctx.Err() == nil {
		msg, err := c.bus.Receive(ctx, c.pingEvery)
		switch {
		case err == nil && msg == pending:
			pending = ""
		case err == nil:
			c.apply(msg)
		case !errors.Is(err, ErrBusQuiet):
			return // broken or resubscribed: go offline and prove it again
		}
		switch {
		case pending != "" && time.Since(sentAt) > 3*c.pingEvery:
			return
		case pending == "" && time.Since(sentAt) >= c.pingEvery:
			c.sweep()
			pending, sentAt = newPing(), time.Now()
			if err := c.bus.Publish(ctx, pending); err != nil {
				return
			}
		}
	}
}

// sweep drops entries past their TTL, so that sessions nobody uses any
// more do not keep their tokens in memory, and forgets old evictions.
func (c *Cache) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if time.Since(e.loadedAt) >= c.ttl {
			delete(c.entries, k)
		}
	}
	for k, e := range c.evicted {
		if time.Since(e.at) >= evictionMemory {
			c.horizon = max(c.horizon, e.gen)
			delete(c.evicted, k)
		}
	}
}

// apply evicts the session a message names; pings of other instances are
// not for us.
func (c *Cache) apply(msg string) {
	if strings.HasPrefix(msg, pingPrefix) {
		return
	}
	c.evict(msg)
}

func newPing() string {
	b := make([]byte, 12)
	rand.Read(b)
	return pingPrefix + hex.EncodeToString(b)
}
