package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisStore keeps sessions in Redis, shared by every gateway instance that
// uses the same Redis. Each session is a hash under prefix + SHA-256 of the
// token (never the token), expiring in Redis at the session's ExpiresAt, so
// no sweeping is needed. Writes that must not revive an expired session run
// as Lua scripts, atomic in Redis.
type RedisStore struct {
	rdb    redis.UniversalClient
	codec  valueCodec
	prefix string
	now    func() time.Time
}

var (
	_ Store     = (*RedisStore)(nil)
	_ Toucher   = (*RedisStore)(nil)
	_ Locker    = (*RedisStore)(nil)
	_ Announcer = (*RedisStore)(nil)
)

// DefaultRedisPrefix starts every key the Redis store writes.
const DefaultRedisPrefix = "portal:"

// RedisPrefix sets the key prefix of a Redis store (default "portal:"), so
// several portals or test runs can share one Redis.
func RedisPrefix(prefix string) StoreOption {
	return func(o *storeOptions) { o.redisPrefix = prefix }
}

// NewRedisStore returns a Store on rdb.
func NewRedisStore(rdb redis.UniversalClient, opts ...StoreOption) *RedisStore {
	o := applyOptions(opts)
	prefix := o.redisPrefix
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &RedisStore{rdb: rdb, codec: o.codec, prefix: prefix, now: time.Now}
}

// NewRedisClient connects to the Redis named by url (redis://, rediss:// or
// unix://) with timeouts short enough that an outage becomes a prompt 503
// instead of a hanging request. It talks to the primary only: the session
// cache relies on a read after an announced write seeing that write.
func NewRedisClient(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.PoolTimeout = 2 * time.Second
	opt.MaxRetries = 1
	opt.DialerRetries = 1
	opt.DialerRetryTimeout = 50 * time.Millisecond
	// Maintenance notifications let go-redis move a subscription to
	// another endpoint by itself and relax read timeouts; the session
	// cache wants every reconnect of its subscription to be seen.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(opt), nil
}

func (st *RedisStore) key(id string) string     { return st.prefix + "session:" + hashID(id) }
func (st *RedisStore) channel() string          { return redisChannel(st.prefix) }
func (st *RedisStore) lockKey(id string) string { return st.prefix + "session-lock:" + hashID(id) }

// redisChannel is the pub/sub channel on which the writes of the sessions
// under prefix are announced (RedisBus subscribes to it).
func redisChannel(prefix string) string { return prefix + "session-invalidations" }

// AnnouncesOn reports whether bus subscribes to the channel on which every
// save, touch and delete publishes the session's id hash, in the same
// script as the write.
func (st *RedisStore) AnnouncesOn(bus Bus) bool {
	b, ok := bus.(*RedisBus)
	return ok && b.channel == st.channel()
}

// micros and fromMicros store times as Unix microseconds: exact in Lua's
// doubles until the year 2255, and the precision the stores promise.
func micros(t time.Time) int64 { return normTime(t).UnixMicro() }

func fromMicros(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(n).UTC(), nil
}

// expireAtMillis is when Redis may drop the key: ExpiresAt rounded up to
// the millisecond, so the key never disappears before the session ends.
func expireAtMillis(t time.Time) int64 {
	ms := normTime(t).UnixMilli()
	if normTime(t).UnixMicro()%1000 != 0 {
		ms++
	}
	return ms
}

var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'u', ARGV[1], 'd', ARGV[2], 'c', ARGV[3], 'l', ARGV[4], 'e', ARGV[5])
redis.call('PEXPIREAT', KEYS[1], ARGV[6])
return 1`)

// saveScript updates a live session; ARGV[5] is now, and an expired or
// missing session is left alone (0). A write is announced on ARGV[7] with
// the id hash ARGV[8], atomically with it.
var saveScript = redis.NewScript(`
local e = redis.call('HGET', KEYS[1], 'e')
if not e or tonumber(e) < tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], 'u', ARGV[1], 'd', ARGV[2], 'l', ARGV[3], 'e', ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[6])
redis.call('PUBLISH', ARGV[7], ARGV[8])
return 1`)

var touchScript = redis.NewScript(`
local e = redis.call('HGET', KEYS[1], 'e')
if not e or tonumber(e) < tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'l', ARGV[1], 'e', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1`)

// deleteScript removes a session and announces it, even when it was
// already gone: announcing costs little, and a cache elsewhere may hold it.
var deleteScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1`)

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Create inserts s; an existing id is an error, not an outage.
func (st *RedisStore) Create(ctx context.Context, s *Session) error {
	if s.ID == "" {
		return errors.New("session: create: empty id")
	}
	key := st.key(s.ID)
	data, err := st.codec.encode(hashID(s.ID), s.Values)
	if err != nil {
		return fmt.Errorf("session: create: %w", err)
	}
	n, err := createScript.Run(ctx, st.rdb, []string{key},
		s.UserKey, data, micros(s.CreatedAt), micros(s.LastSeenAt), micros(s.ExpiresAt), expireAtMillis(s.ExpiresAt)).Int()
	if err != nil {
		return unavailable("create", err)
	}
	if n == 0 {
		return errors.New("session: create: id already exists")
	}
	return nil
}

// Load returns the unexpired session with this id, or ErrNotFound.
func (st *RedisStore) Load(ctx context.Context, id string) (*Session, error) {
	if id == "" {
		return nil, ErrNotFound
	}
	vals, err := st.rdb.HMGet(ctx, st.key(id), "u", "d", "c", "l", "e").Result()
	if err != nil {
		return nil, unavailable("load", err)
	}
	var f [5]string
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return nil, ErrNotFound // missing key (all nil) or a half-written one
		}
		f[i] = s
	}
	var times [3]time.Time
	for i := range times {
		if times[i], err = fromMicros(f[2+i]); err != nil {
			return nil, fmt.Errorf("%w: session: load: bad time: %w", ErrNotFound, err)
		}
	}
	if times[2].Before(normTime(st.now())) {
		return nil, ErrNotFound
	}
	values, err := st.codec.decode(hashID(id), f[1])
	if err != nil {
		return nil, fmt.Errorf("session: load: %w", err)
	}
	return &Session{ID: id, UserKey: f[0], Values: values, CreatedAt: times[0], LastSeenAt: times[1], ExpiresAt: times[2]}, nil
}

// Save writes everything but ID and CreatedAt of a live session.
func (st *RedisStore) Save(ctx context.Context, s *Session) error {
	data, err := st.codec.encode(hashID(s.ID), s.Values)
	if err != nil {
		return fmt.Errorf("session: save: %w", err)
	}
	n, err := saveScript.Run(ctx, st.rdb, []string{st.key(s.ID)},
		s.UserKey, data, micros(s.LastSeenAt), micros(s.ExpiresAt), micros(st.now()), expireAtMillis(s.ExpiresAt), st.channel(), hashID(s.ID)).Int()
	if err != nil {
		return unavailable("save", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Touch slides the expiry of a live session without rewriting its values.
func (st *RedisStore) Touch(ctx context.Context, id string, lastSeenAt, expiresAt time.Time) error {
	n, err := touchScript.Run(ctx, st.rdb, []string{st.key(id)},
		micros(lastSeenAt), micros(expiresAt), micros(st.now()), expireAtMillis(expiresAt), st.channel(), hashID(id)).Int()
	if err != nil {
		return unavailable("touch", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Delete removes the session and any lease on it.
func (st *RedisStore) Delete(ctx context.Context, id string) error {
	if err := deleteScript.Run(ctx, st.rdb, []string{st.key(id)}, st.channel(), hashID(id)).Err(); err != nil {
		return unavailable("delete", err)
	}
	return nil
}

// DeleteExpired removes nothing: Redis drops each session when it expires.
func (st *RedisStore) DeleteExpired(context.Context, time.Time) (int, error) {
	return 0, nil
}

// TryLock takes the lease with SET NX PX; only its holder can release it.
func (st *RedisStore) TryLock(ctx context.Context, id string, ttl time.Duration) (func(context.Context) error, bool, error) {
	key, holder := st.lockKey(id), randomHolder()
	ok, err := st.rdb.SetNX(ctx, key, holder, ttl).Result()
	if err != nil {
		return nil, false, unavailable("lock", err)
	}
	if !ok {
		return nil, false, nil
	}
	release := func(ctx context.Context) error {
		if err := unlockScript.Run(ctx, st.rdb, []string{key}, holder).Err(); err != nil {
			return unavailable("unlock", err)
		}
		return nil
	}
	return release, true, nil
}

// Ping reports whether Redis answers, for readiness checks.
func (st *RedisStore) Ping(ctx context.Context) error {
	if err := st.rdb.Ping(ctx).Err(); err != nil {
		return unavailable("ping", err)
	}
	return nil
}
