package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestRedisStoreConformance(t *testing.T) {
	rdb := sessiontest.Redis(t)
	newStore := func(t *testing.T) *session.RedisStore {
		return session.NewRedisStore(rdb, session.RedisPrefix(sessiontest.RedisPrefix(t, rdb)))
	}
	t.Run("plain", func(t *testing.T) {
		sessiontest.RunStoreConformance(t, func(t *testing.T) session.Store { return newStore(t) })
	})
	t.Run("shared", func(t *testing.T) {
		sessiontest.RunSharedStoreConformance(t, func(t *testing.T) sessiontest.SharedStore { return newStore(t) })
	})
	t.Run("encrypted", func(t *testing.T) {
		kr := testKeyring(t)
		sessiontest.RunStoreConformance(t, func(t *testing.T) session.Store {
			return session.NewRedisStore(rdb, session.RedisPrefix(sessiontest.RedisPrefix(t, rdb)), session.Encrypted(kr))
		})
	})
}

// Redis drops a session's key when the session expires, so nothing piles up.
func TestRedisStoreExpiresKeys(t *testing.T) {
	rdb := sessiontest.Redis(t)
	ctx := context.Background()
	prefix := sessiontest.RedisPrefix(t, rdb)
	st := session.NewRedisStore(rdb, session.RedisPrefix(prefix))
	now := time.Now().UTC()
	s := &session.Session{ID: sessiontest.NewID(), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(30 * time.Minute)}
	if err := st.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v; want one", keys, err)
	}
	if strings.Contains(keys[0], s.ID) {
		t.Fatalf("key %q holds the raw session token", keys[0])
	}
	ttl, err := rdb.PTTL(ctx, keys[0]).Result()
	if err != nil || ttl < 29*time.Minute || ttl > 30*time.Minute+time.Second {
		t.Fatalf("PTTL = %v, %v; want about 30 minutes", ttl, err)
	}
}

// Every store must report a Redis outage as ErrUnavailable, never as "no session".
func TestRedisStoreUnavailable(t *testing.T) {
	rdb, err := session.NewRedisClient("redis://127.0.0.1:1/0") // nothing listens on port 1
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	st := session.NewRedisStore(rdb)
	ctx := context.Background()
	id := sessiontest.NewID()
	now := time.Now()
	s := &session.Session{ID: id, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Minute)}
	checks := map[string]error{
		"create": st.Create(ctx, s),
		"save":   st.Save(ctx, s),
		"touch":  st.Touch(ctx, id, now, now.Add(time.Minute)),
		"delete": st.Delete(ctx, id),
	}
	_, checks["load"] = st.Load(ctx, id)
	_, _, checks["lock"] = st.TryLock(ctx, id, time.Second)
	for op, err := range checks {
		if !errorsIsUnavailable(err) {
			t.Errorf("%s error = %v, want ErrUnavailable", op, err)
		}
	}
}
