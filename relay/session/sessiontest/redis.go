package sessiontest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"portal/relay/session"
)

// EnvRedis names the variable with the Redis URL for tests.
const EnvRedis = "PORTAL_TEST_REDIS_URL"

var redisSkipOnce sync.Once

// Redis returns a client on the test Redis, or skips the test, saying so
// plainly, when PORTAL_TEST_REDIS_URL is not set. A set but unreachable
// Redis fails the test: CI must not skip silently.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url := os.Getenv(EnvRedis)
	if url == "" {
		redisSkipOnce.Do(func() {
			fmt.Fprintf(os.Stderr, "sessiontest: Redis was skipped: set %s to run the Redis suites\n", EnvRedis)
		})
		t.Skipf("Redis was skipped: %s is not set", EnvRedis)
	}
	rdb, err := session.NewRedisClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("%s=%s is set but Redis does not answer: %v", EnvRedis, url, err)
	}
	return rdb
}

// RedisPrefix returns a key prefix of its own for one test and deletes its
// keys when the test ends, so tests share one Redis without seeing each other.
func RedisPrefix(t testing.TB, rdb *redis.Client) string {
	t.Helper()
	prefix := "portal-test:" + NewID()[:12] + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return prefix
}
