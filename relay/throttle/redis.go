package throttle

import (
	"context"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix starts every key Redis keeps for budgets (after
// redis_rate's own "rate:").
const DefaultRedisPrefix = "portal:throttle:"

// Redis keeps budgets in Redis, shared by every instance that uses the same
// Redis and prefix. It runs redis_rate's GCRA script: one atomic step per
// call, on Redis's clock, each key expiring when its budget is full again.
type Redis struct {
	rl     *redis_rate.Limiter
	prefix string
}

// NewRedis returns a Limiter on rdb whose keys start with prefix (empty:
// DefaultRedisPrefix).
func NewRedis(rdb *redis.Client, prefix string) *Redis {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &Redis{rl: redis_rate.NewLimiter(rdb), prefix: prefix}
}

func (l Limit) redis() redis_rate.Limit {
	return redis_rate.Limit{Rate: l.Burst, Burst: l.Burst, Period: l.Period}
}

// Allow implements Limiter. It asks for zero events, which reads the
// key's state (ResetAfter: until the budget is full again) without spending.
func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Decision, error) {
	if !l.valid() {
		return Decision{}, ErrInvalidLimit
	}
	res, err := r.rl.AllowN(ctx, r.prefix+key, l.redis(), 0)
	if err != nil {
		return Decision{}, fmt.Errorf("throttle: redis: %w", err)
	}
	return decide(max(res.ResetAfter, 0), l), nil
}

// Fail implements Limiter.
func (r *Redis) Fail(ctx context.Context, key string, l Limit) error {
	if !l.valid() {
		return ErrInvalidLimit
	}
	if _, err := r.rl.AllowN(ctx, r.prefix+key, l.redis(), 1); err != nil {
		return fmt.Errorf("throttle: redis: %w", err)
	}
	return nil
}
