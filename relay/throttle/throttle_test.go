package throttle_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"portal/relay/throttle"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// subject is one Limiter under the suite, with a way to let time pass on
// its clock.
type subject struct {
	limiter throttle.Limiter
	advance func(time.Duration)
}

// runSuite is the conformance suite every Limiter passes.
func runSuite(t *testing.T, newSubject func(t *testing.T) subject) {
	ctx := context.Background()
	short := throttle.Limit{Burst: 3, Period: 600 * time.Millisecond} // one back every 200ms

	t.Run("burst of failures, then refused with a retry time", func(t *testing.T) {
		s := newSubject(t)
		for i := range short.Burst {
			d, err := s.limiter.Allow(ctx, "k", short)
			if err != nil || !d.Allowed {
				t.Fatalf("before failure %d: %+v %v, want allowed", i+1, d, err)
			}
			if err := s.limiter.Fail(ctx, "k", short); err != nil {
				t.Fatal(err)
			}
		}
		d, err := s.limiter.Allow(ctx, "k", short)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 200*time.Millisecond {
			t.Fatalf("after %d failures: %+v, want refused for at most one interval (200ms)", short.Burst, d)
		}
	})

	t.Run("allow spends nothing", func(t *testing.T) {
		s := newSubject(t)
		for range 50 {
			if d, err := s.limiter.Allow(ctx, "k", short); err != nil || !d.Allowed {
				t.Fatalf("%+v %v", d, err)
			}
		}
		for range short.Burst {
			if err := s.limiter.Fail(ctx, "k", short); err != nil {
				t.Fatal(err)
			}
		}
		if d, _ := s.limiter.Allow(ctx, "k", short); d.Allowed {
			t.Fatal("still allowed after a full burst of failures: Allow must not have refilled")
		}
	})

	t.Run("keys are independent", func(t *testing.T) {
		s := newSubject(t)
		for range short.Burst {
			s.limiter.Fail(ctx, "a", short)
		}
		if d, _ := s.limiter.Allow(ctx, "a", short); d.Allowed {
			t.Fatal("a not refused")
		}
		if d, err := s.limiter.Allow(ctx, "b", short); err != nil || !d.Allowed {
			t.Fatalf("b: %+v %v, want allowed: one key's failures must not block another", d, err)
		}
	})

	t.Run("budget leaks back one at a time", func(t *testing.T) {
		s := newSubject(t)
		for range short.Burst {
			s.limiter.Fail(ctx, "k", short)
		}
		d, _ := s.limiter.Allow(ctx, "k", short)
		if d.Allowed {
			t.Fatal("not refused")
		}
		s.advance(d.RetryAfter + 5*time.Millisecond)
		if d, err := s.limiter.Allow(ctx, "k", short); err != nil || !d.Allowed {
			t.Fatalf("after RetryAfter: %+v %v, want allowed", d, err)
		}
		s.limiter.Fail(ctx, "k", short)
		if d, _ := s.limiter.Allow(ctx, "k", short); d.Allowed {
			t.Fatal("one interval gives back one failure, not more")
		}
		s.advance(short.Period + 5*time.Millisecond)
		for i := range short.Burst {
			if d, _ := s.limiter.Allow(ctx, "k", short); !d.Allowed {
				t.Fatalf("after a whole period, failure %d refused", i+1)
			}
			s.limiter.Fail(ctx, "k", short)
		}
	})

	t.Run("failing while refused records nothing more", func(t *testing.T) {
		s := newSubject(t)
		for range short.Burst + 20 {
			s.limiter.Fail(ctx, "k", short)
		}
		d, _ := s.limiter.Allow(ctx, "k", short)
		if d.Allowed || d.RetryAfter > 200*time.Millisecond {
			t.Fatalf("%+v: extra failures past the budget must not push the wait out", d)
		}
	})

	t.Run("concurrent failures are all counted", func(t *testing.T) {
		s := newSubject(t)
		long := throttle.Limit{Burst: 40, Period: time.Hour}
		var wg sync.WaitGroup
		for range 39 {
			wg.Go(func() {
				if err := s.limiter.Fail(ctx, "k", long); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if d, _ := s.limiter.Allow(ctx, "k", long); !d.Allowed {
			t.Fatal("39 of 40 spent: one more must be allowed")
		}
		s.limiter.Fail(ctx, "k", long)
		if d, _ := s.limiter.Allow(ctx, "k", long); d.Allowed {
			t.Fatal("40 of 40 spent: must be refused (a lost update under concurrency?)")
		}
	})

	t.Run("invalid limit", func(t *testing.T) {
		s := newSubject(t)
		if _, err := s.limiter.Allow(ctx, "k", throttle.Limit{}); err == nil {
			t.Fatal("Allow accepted a zero limit")
		}
		if err := s.limiter.Fail(ctx, "k", throttle.Limit{Burst: 1}); err == nil {
			t.Fatal("Fail accepted a limit without a period")
		}
	})
}

func TestMemory(t *testing.T) {
	runSuite(t, func(t *testing.T) subject {
		clock := &fakeClock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
		return subject{limiter: throttle.NewMemoryWithClock(clock.Now), advance: clock.advance}
	})
}

// The memory limiter forgets keys whose budget is full again, so an
// attacker cycling through user keys cannot grow it without bound.
func TestMemoryForgetsRefilledKeys(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	m := throttle.NewMemoryWithClock(clock.Now)
	l := throttle.Limit{Burst: 10, Period: time.Minute}
	ctx := context.Background()
	for i := range 1000 {
		m.Fail(ctx, fmt.Sprint("old", i), l)
	}
	clock.advance(time.Minute)
	for i := range 1000 {
		m.Fail(ctx, fmt.Sprint("new", i), l)
	}
	if n := m.Len(); n > 1100 {
		t.Fatalf("%d keys held, want the 1000 refilled ones swept", n)
	}
}

func TestRedis(t *testing.T) {
	rdb := testRedis(t)
	runSuite(t, func(t *testing.T) subject {
		// Redis's own clock decides (the GCRA script reads TIME), and it
		// cannot be moved: these waits are the real intervals (a few
		// hundred milliseconds).
		return subject{limiter: throttle.NewRedis(rdb, testPrefix(t, rdb)), advance: func(d time.Duration) { time.Sleep(d) }}
	})
}

// Two instances on one Redis share budgets; a different prefix does not.
func TestRedisShared(t *testing.T) {
	rdb := testRedis(t)
	ctx := context.Background()
	prefix := testPrefix(t, rdb)
	a, b := throttle.NewRedis(rdb, prefix), throttle.NewRedis(rdb, prefix)
	l := throttle.Limit{Burst: 4, Period: time.Hour}
	a.Fail(ctx, "k", l)
	a.Fail(ctx, "k", l)
	b.Fail(ctx, "k", l)
	b.Fail(ctx, "k", l)
	if d, _ := a.Allow(ctx, "k", l); d.Allowed {
		t.Fatal("a does not see b's failures")
	}
	if d, _ := throttle.NewRedis(rdb, testPrefix(t, rdb)).Allow(ctx, "k", l); !d.Allowed {
		t.Fatal("another prefix shares the budget")
	}
}

func TestRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	r := throttle.NewRedis(rdb, "")
	l := throttle.Limit{Burst: 1, Period: time.Second}
	if _, err := r.Allow(context.Background(), "k", l); err == nil {
		t.Fatal("Allow on a Redis that is down: no error")
	}
	if err := r.Fail(context.Background(), "k", l); err == nil {
		t.Fatal("Fail on a Redis that is down: no error")
	}
}

func TestSignIn(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := throttle.NewSignIn(throttle.NewMemoryWithClock(clock.Now), throttle.SignInConfig{})

	t.Run("defaults: ten failures per user key", func(t *testing.T) {
		for i := range 10 {
			if d, _ := s.Check(ctx, "198.51.100.1", "member"); !d.Allowed {
				t.Fatalf("failure %d refused", i+1)
			}
			s.Failed(ctx, "198.51.100.1", "member")
		}
		d, _ := s.Check(ctx, "198.51.100.2", "member")
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 90*time.Second {
			t.Fatalf("%+v, want refused from any address for at most 90s", d)
		}
		if d, _ := s.Check(ctx, "198.51.100.1", "other"); !d.Allowed {
			t.Fatal("another user key from the same address refused after 10 failures")
		}
	})
	t.Run("defaults: fifty failures per address", func(t *testing.T) {
		for i := range 50 {
			if d, _ := s.Check(ctx, "203.0.113.7", fmt.Sprint("key", i)); !d.Allowed {
				t.Fatalf("failure %d refused", i+1)
			}
			s.Failed(ctx, "203.0.113.7", fmt.Sprint("key", i))
		}
		if d, _ := s.Check(ctx, "203.0.113.7", "fresh"); d.Allowed {
			t.Fatal("51st failure from one address allowed")
		}
		if d, _ := s.Check(ctx, "203.0.113.7", ""); d.Allowed {
			t.Fatal("address check without a user key allowed")
		}
		if d, _ := s.Check(ctx, "203.0.113.8", "fresh"); !d.Allowed {
			t.Fatal("another address refused")
		}
	})
	t.Run("IPv6 counts per /64", func(t *testing.T) {
		for i := range 50 {
			s.Failed(ctx, fmt.Sprintf("2001:db8:1:2::%x", i+1), "")
		}
		if d, _ := s.Check(ctx, "2001:db8:1:2:ffff::1", ""); d.Allowed {
			t.Fatal("a fresh address in the same /64 has a fresh budget")
		}
		if d, _ := s.Check(ctx, "2001:db8:1:3::1", ""); !d.Allowed {
			t.Fatal("the next /64 refused")
		}
	})
}

func TestKeysAreBounded(t *testing.T) {
	long := strings.Repeat("x", 10000)
	for _, k := range []string{throttle.UserKeyKey(long), throttle.AddressKey(long), throttle.UserKeyKey("a\x00\n")} {
		if len(k) > 80 || strings.ContainsAny(k, "\x00\n") {
			t.Errorf("key %q: want short and printable", k)
		}
	}
	if throttle.UserKeyKey("alice") == throttle.UserKeyKey("bob") {
		t.Error("two user keys share a budget")
	}
	if throttle.AddressKey("::ffff:192.0.2.1") != throttle.AddressKey("192.0.2.1") {
		t.Error("an IPv4-mapped address is a budget of its own")
	}
}

// testRedis returns a client on PORTAL_TEST_REDIS_URL or skips.
func testRedis(t *testing.T) *redis.Client {
	t.Helper()
	url := os.Getenv("PORTAL_TEST_REDIS_URL")
	if url == "" {
		t.Skip("Redis was skipped: PORTAL_TEST_REDIS_URL is not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PORTAL_TEST_REDIS_URL is set but Redis does not answer: %v", err)
	}
	return rdb
}

// testPrefix is a key prefix of one test's own; its keys are deleted at the end.
func testPrefix(t *testing.T, rdb *redis.Client) string {
	b := make([]byte, 6)
	rand.Read(b)
	prefix := "portal-test:throttle:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "rate:"+prefix+"*", 100).Iterator() // redis_rate adds "rate:"
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return prefix
}
