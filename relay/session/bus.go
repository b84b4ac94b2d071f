package session

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// RedisBus is a Bus on Redis PUBLISH/SUBSCRIBE, for instances that share a
// RedisStore.
type RedisBus struct {
	rdb     redis.UniversalClient
	channel string
	ps      *redis.PubSub
}

var _ Bus = (*RedisBus)(nil)

// NewRedisBus subscribes to the invalidation channel under prefix (use the
// store's prefix). A Redis that is down now is retried by Receive.
func NewRedisBus(rdb redis.UniversalClient, prefix string) *RedisBus {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	channel := redisChannel(prefix)
	// Subscribe records the channel even when it cannot connect yet, and
	// every reconnect subscribes again.
	return &RedisBus{rdb: rdb, channel: channel, ps: rdb.Subscribe(context.Background(), channel)}
}

// Publish sends msg on the channel.
func (b *RedisBus) Publish(ctx context.Context, msg string) error {
	return b.rdb.Publish(ctx, b.channel, msg).Err()
}

// Receive returns the next message, skipping pongs. A subscription
// confirmation is reported as ErrBusResubscribed: go-redis reconnects and
// subscribes again by itself in some cases without returning an error (a
// connection it finds unusable, a server hand-off), and whatever was
// published in between is lost to this subscriber.
func (b *RedisBus) Receive(ctx context.Context, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			// go-redis takes a non-positive timeout as "keep the old
			// deadline", which has passed: a read would fail and reconnect.
			return "", ErrBusQuiet
		}
		msg, err := b.ps.ReceiveTimeout(ctx, left)
		if err != nil {
			return "", quiet(err)
		}
		switch m := msg.(type) {
		case *redis.Message:
			return m.Payload, nil
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				return "", ErrBusResubscribed
			}
		}
	}
}

// Close ends the subscription.
func (b *RedisBus) Close() error { return b.ps.Close() }

// PGBus is a Bus on PostgreSQL LISTEN/NOTIFY, for instances that share a
// DBStore on PostgreSQL. It holds one connection of its own, outside the
// pool.
type PGBus struct {
	db      *bun.DB
	channel string

	mu        sync.Mutex // pgdriver's Listener is not safe for concurrent use
	ln        *pgdriver.Listener
	listening bool
}

var _ Bus = (*PGBus)(nil)

// DefaultPGChannel is the notification channel of PGBus, on which the
// trigger of the sessions table announces every change and removal
// (migration 20261125000001_announce_session_writes).
const DefaultPGChannel = "portal_session_invalidations"

// NewPGBus returns a bus on db, which must be opened with pgdriver, on the
// notification channel given ("" for DefaultPGChannel). Channels are per
// database, so portals sharing a database share the default channel.
func NewPGBus(db *bun.DB, channel string) *PGBus {
	if channel == "" {
		channel = DefaultPGChannel
	}
	return &PGBus{db: db, channel: channel, ln: pgdriver.NewListener(db)}
}

// Publish notifies the channel; the notification goes out when the
// statement commits, which for this one statement is at once.
func (b *PGBus) Publish(ctx context.Context, msg string) error {
	_, err := b.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", b.channel, msg)
	return err
}

// Receive returns the next notification; the first call (and the first
// after the listener lost its connection) starts listening.
func (b *PGBus) Receive(ctx context.Context, timeout time.Duration) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.listening {
		// The listener remembers the channel and listens again on every
		// connection it makes from now on.
		if err := b.ln.Listen(ctx, b.channel); err != nil {
			return "", err
		}
		b.listening = true
	}
	_, payload, err := b.ln.ReceiveTimeout(ctx, timeout)
	if err != nil {
		return "", quiet(err)
	}
	return payload, nil
}

// Close releases the listener's connection.
// It does not wait for a Receive in progress, which then fails.
func (b *PGBus) Close() error { return b.ln.Close() }

// quiet turns a read timeout into ErrBusQuiet.
func quiet(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrBusQuiet
	}
	return err
}

// LocalBus is a Bus within one process, for a store that only this process
// writes: a SQLite file, which `portal serve` holds under an exclusive
// lock. Every write of a session then goes through this process's Manager,
// which evicts it from the cache before it publishes, so nothing needs to
// travel further; the bus only carries the cache's own pings and those
// evictions, and keeps the cache's "online only when proven" rule the same
// for every store.
type LocalBus struct {
	ch       chan string
	overflow atomic.Bool
}

var _ Bus = (*LocalBus)(nil)

// localBusDepth bounds the messages waiting for the cache's Run.
const localBusDepth = 4096

// NewLocalBus returns an in-process bus.
func NewLocalBus() *LocalBus { return &LocalBus{ch: make(chan string, localBusDepth)} }

// Publish queues msg. When the queue is full the message is dropped and the
// next Receive reports ErrBusResubscribed, so that the cache empties itself
// and proves the bus again rather than trust what it may have missed.
func (b *LocalBus) Publish(_ context.Context, msg string) error {
	select {
	case b.ch <- msg:
	default:
		b.overflow.Store(true)
	}
	return nil
}

// Receive returns the next message, ErrBusQuiet after timeout.
func (b *LocalBus) Receive(ctx context.Context, timeout time.Duration) (string, error) {
	if b.overflow.Swap(false) {
		return "", ErrBusResubscribed
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case msg := <-b.ch:
		return msg, nil
	case <-t.C:
		return "", ErrBusQuiet
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close does nothing: there is no connection to release.
func (b *LocalBus) Close() error { return nil }
