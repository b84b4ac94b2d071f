package sessiontest

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"portal/relay/session"
)

// SharedStore is a store that several gateway instances can share: it
// slides expiry without rewriting values and holds refresh leases.
type SharedStore interface {
	session.Store
	session.Toucher
	session.Locker
}

// RunSharedStoreConformance runs the Touch and lease contract, on top of
// RunStoreConformance, against stores made by newStore; the cases use fresh
// ids, so one store may serve them all.
func RunSharedStoreConformance(t *testing.T, newStore func(t *testing.T) SharedStore) {
	t.Helper()
	ctx := context.Background()

	t.Run("touch slides expiry and keeps values", func(t *testing.T) {
		st := newStore(t)
		s := live("user-1", map[string]string{session.AttrBackendJWT: "jwt-1"})
		mustCreate(t, st, s)
		newer := *s
		newer.Values = map[string]string{session.AttrBackendJWT: "jwt-2"}
		if err := st.Save(ctx, &newer); err != nil {
			t.Fatalf("Save: %v", err)
		}
		lastSeen, expires := s.LastSeenAt.Add(time.Minute), s.ExpiresAt.Add(time.Minute)
		if err := st.Touch(ctx, s.ID, lastSeen, expires); err != nil {
			t.Fatalf("Touch: %v", err)
		}
		want := newer
		want.LastSeenAt, want.ExpiresAt = lastSeen, expires
		assertEqual(t, mustLoad(t, st, s.ID), &want)
	})

	t.Run("touch unknown or expired", func(t *testing.T) {
		st := newStore(t)
		old := expired("user-1")
		mustCreate(t, st, old)
		later := time.Now().Add(time.Hour)
		for name, id := range map[string]string{"unknown": NewID(), "expired": old.ID} {
			if err := st.Touch(ctx, id, time.Now(), later); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("Touch(%s) error = %v, want ErrNotFound", name, err)
			}
		}
		if _, err := st.Load(ctx, old.ID); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Touch revived an expired session: Load error = %v", err)
		}
	})

	t.Run("lease is exclusive until released", func(t *testing.T) {
		st := newStore(t)
		id, other := NewID(), NewID()
		release := mustLock(t, st, id, time.Minute)
		if _, ok, err := st.TryLock(ctx, id, time.Minute); err != nil || ok {
			t.Fatalf("second TryLock = ok %v, err %v; want held", ok, err)
		}
		releaseOther := mustLock(t, st, other, time.Minute)
		if err := release(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
		mustLock(t, st, id, time.Minute)
		if err := releaseOther(ctx); err != nil {
			t.Fatalf("release other: %v", err)
		}
	})

	t.Run("lease runs out by itself", func(t *testing.T) {
		st := newStore(t)
		id := NewID()
		stale := mustLock(t, st, id, 50*time.Millisecond)
		newer := pollLock(t, st, id, time.Minute)
		// The first holder's late release must not free the new holder's lease.
		if err := stale(ctx); err != nil {
			t.Fatalf("stale release: %v", err)
		}
		if _, ok, err := st.TryLock(ctx, id, time.Minute); err != nil || ok {
			t.Fatalf("TryLock after a stale release = ok %v, err %v; want still held", ok, err)
		}
		if err := newer(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
	})

	t.Run("one of many concurrent takers wins", func(t *testing.T) {
		st := newStore(t)
		id := NewID()
		var wins atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 20 {
			wg.Go(func() {
				_, ok, err := st.TryLock(ctx, id, time.Minute)
				if err != nil {
					errs <- err
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("TryLock: %v", err)
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("%d concurrent TryLock calls succeeded, want exactly 1", n)
		}
	})

	t.Run("values written after a read survive that read's touch", func(t *testing.T) {
		st := newStore(t)
		s := live("user-1", map[string]string{session.AttrBackendJWT: "old"})
		mustCreate(t, st, s)
		stale := mustLoad(t, st, s.ID) // a request reads ...
		fresh := *s
		fresh.Values = map[string]string{session.AttrBackendJWT: "new"}
		if err := st.Save(ctx, &fresh); err != nil { // ... a refresh saves ...
			t.Fatalf("Save: %v", err)
		}
		if err := st.Touch(ctx, stale.ID, stale.LastSeenAt.Add(time.Minute), stale.ExpiresAt.Add(time.Minute)); err != nil {
			t.Fatalf("Touch: %v", err) // ... and the first request slides the expiry
		}
		if got := mustLoad(t, st, s.ID).Values; !maps.Equal(got, fresh.Values) {
			t.Fatalf("Values = %v after a stale touch, want %v", got, fresh.Values)
		}
	})
}

func mustLock(t *testing.T, st session.Locker, id string, ttl time.Duration) func(context.Context) error {
	t.Helper()
	release, ok, err := st.TryLock(context.Background(), id, ttl)
	if err != nil || !ok {
		t.Fatalf("TryLock = ok %v, err %v; want the lease", ok, err)
	}
	return release
}

// pollLock retries TryLock until it succeeds or a deadline passes.
func pollLock(t *testing.T, st session.Locker, id string, ttl time.Duration) func(context.Context) error {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		release, ok, err := st.TryLock(context.Background(), id, ttl)
		if err != nil {
			t.Fatalf("TryLock: %v", err)
		}
		if ok {
			return release
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired lease was never given to a new taker")
		}
		time.Sleep(10 * time.Millisecond) // polling a store-side expiry, bounded by the deadline
	}
}
