// Package sessiontest holds the conformance suite every session.Store must
// pass, so the database store and later ones (Redis) are held to one contract.
package sessiontest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"maps"
	"testing"
	"time"

	"portal/relay/session"
)

// RunStoreConformance runs the Store contract against stores made by
// newStore, which must return an empty store for each call. Stores are
// expected to compare expiry with the wall clock and to round-trip times to
// the microsecond.
func RunStoreConformance(t *testing.T, newStore func(t *testing.T) session.Store) {
	t.Helper()
	ctx := context.Background()

	t.Run("create then load round-trips every field", func(t *testing.T) {
		st := newStore(t)
		want := live("user-1", map[string]string{session.AttrBackendJWT: "jwt-1"})
		mustCreate(t, st, want)
		got := mustLoad(t, st, want.ID)
		assertEqual(t, got, want)
	})

	t.Run("load unknown id", func(t *testing.T) {
		st := newStore(t)
		mustCreate(t, st, live("user-1", nil))
		if _, err := st.Load(ctx, NewID()); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load(unknown) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("load empty id", func(t *testing.T) {
		st := newStore(t)
		if _, err := st.Load(ctx, ""); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf(`Load("") error = %v, want ErrNotFound`, err)
		}
	})

	t.Run("load expired", func(t *testing.T) {
		st := newStore(t)
		s := expired("user-1")
		mustCreate(t, st, s)
		if _, err := st.Load(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load(expired) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("create rejects empty id", func(t *testing.T) {
		st := newStore(t)
		s := live("user-1", nil)
		s.ID = ""
		err := st.Create(ctx, s)
		if err == nil {
			t.Fatal(`Create with ID "" succeeded, want an error`)
		}
		if errors.Is(err, session.ErrUnavailable) {
			t.Fatalf(`Create with ID "" error = %v: a caller's bug, not an outage`, err)
		}
	})

	t.Run("create rejects duplicate id", func(t *testing.T) {
		st := newStore(t)
		first := live("user-1", map[string]string{"k": "first"})
		mustCreate(t, st, first)
		second := live("user-2", map[string]string{"k": "second"})
		second.ID = first.ID
		err := st.Create(ctx, second)
		if err == nil {
			t.Fatal("second Create with the same ID succeeded, want an error")
		}
		if errors.Is(err, session.ErrUnavailable) {
			t.Fatalf("duplicate Create error = %v: a duplicate is a bug, not an outage", err)
		}
		assertEqual(t, mustLoad(t, st, first.ID), first)
	})

	t.Run("values round-trip", func(t *testing.T) {
		tests := []struct {
			name   string
			values map[string]string
			want   map[string]string
		}{
			{"nil becomes empty", nil, map[string]string{}},
			{"empty", map[string]string{}, map[string]string{}},
			{"both token attributes", map[string]string{
				session.AttrBackendJWT:       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
				session.AttrBackendJWTExpiry: "2026-11-22T10:00:00Z",
			}, nil},
			{"empty value", map[string]string{"k": ""}, nil},
			{"json and quotes", map[string]string{`{"a":1}`: `"quoted" \ back\slash`, "null": "null"}, nil},
			{"unicode and newlines", map[string]string{"名前": "Zoë\n\t✓", "emoji": "🙂"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				st := newStore(t)
				s := live("user-1", tt.values)
				mustCreate(t, st, s)
				want := tt.want
				if want == nil {
					want = tt.values
				}
				got := mustLoad(t, st, s.ID)
				if got.Values == nil || !maps.Equal(got.Values, want) {
					t.Fatalf("Values = %#v, want %#v", got.Values, want)
				}
			})
		}
	})

	t.Run("store keeps no reference to caller maps", func(t *testing.T) {
		st := newStore(t)
		values := map[string]string{"k": "v"}
		s := live("user-1", values)
		mustCreate(t, st, s)
		values["k"] = "changed after create"
		got := mustLoad(t, st, s.ID)
		got.Values["k"] = "changed after load"
		if v := mustLoad(t, st, s.ID).Values["k"]; v != "v" {
			t.Fatalf(`Values["k"] = %q after mutating caller maps, want "v"`, v)
		}
	})

	t.Run("save updates user key, values, last seen and expiry", func(t *testing.T) {
		st := newStore(t)
		s := live("user-1", map[string]string{"keep": "1", "drop": "2"})
		mustCreate(t, st, s)
		want := *s
		want.UserKey = "user-2"
		want.Values = map[string]string{"keep": "1", session.AttrBackendJWT: "jwt-2"}
		want.LastSeenAt = s.LastSeenAt.Add(5 * time.Minute)
		want.ExpiresAt = s.ExpiresAt.Add(5 * time.Minute)
		if err := st.Save(ctx, &want); err != nil {
			t.Fatalf("Save: %v", err)
		}
		assertEqual(t, mustLoad(t, st, s.ID), &want)
	})

	t.Run("save keeps created at", func(t *testing.T) {
		st := newStore(t)
		s := live("user-1", nil)
		mustCreate(t, st, s)
		changed := *s
		changed.CreatedAt = s.CreatedAt.Add(time.Hour)
		if err := st.Save(ctx, &changed); err != nil {
			t.Fatalf("Save: %v", err)
		}
		if got := mustLoad(t, st, s.ID).CreatedAt; !got.Equal(s.CreatedAt) {
			t.Fatalf("CreatedAt = %v after Save, want unchanged %v", got, s.CreatedAt)
		}
	})

	t.Run("save unknown id", func(t *testing.T) {
		st := newStore(t)
		if err := st.Save(ctx, live("user-1", nil)); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Save(unknown) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("save does not revive an expired session", func(t *testing.T) {
		st := newStore(t)
		s := expired("user-1")
		mustCreate(t, st, s)
		revived := *s
		revived.ExpiresAt = time.Now().Add(time.Hour)
		if err := st.Save(ctx, &revived); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Save(expired) error = %v, want ErrNotFound", err)
		}
		if _, err := st.Load(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load after Save(expired) error = %v, want ErrNotFound", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		st := newStore(t)
		gone, kept := live("user-1", nil), live("user-2", nil)
		mustCreate(t, st, gone)
		mustCreate(t, st, kept)
		if err := st.Delete(ctx, gone.ID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := st.Load(ctx, gone.ID); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load after Delete error = %v, want ErrNotFound", err)
		}
		assertEqual(t, mustLoad(t, st, kept.ID), kept)
	})

	t.Run("delete unknown id", func(t *testing.T) {
		st := newStore(t)
		if err := st.Delete(ctx, NewID()); err != nil {
			t.Fatalf("Delete(unknown) error = %v, want nil", err)
		}
	})

	t.Run("delete expired keeps live sessions", func(t *testing.T) {
		st := newStore(t)
		old1, old2 := expired("user-1"), expired("user-2")
		fresh := live("user-3", map[string]string{"k": "v"})
		for _, s := range []*session.Session{old1, old2, fresh} {
			mustCreate(t, st, s)
		}
		n, err := st.DeleteExpired(ctx, time.Now())
		if err != nil {
			t.Fatalf("DeleteExpired: %v", err)
		}
		// A store whose backend expires entries by itself may report 0.
		if n < 0 || n > 2 {
			t.Fatalf("DeleteExpired removed %d, want at most the 2 expired", n)
		}
		assertEqual(t, mustLoad(t, st, fresh.ID), fresh)
		for _, s := range []*session.Session{old1, old2} {
			if _, err := st.Load(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Load(expired) after DeleteExpired error = %v, want ErrNotFound", err)
			}
		}
	})

	t.Run("sessions are independent", func(t *testing.T) {
		st := newStore(t)
		a := live("user-a", map[string]string{"k": "a"})
		b := live("user-b", map[string]string{"k": "b"})
		mustCreate(t, st, a)
		mustCreate(t, st, b)
		a2 := *a
		a2.Values = map[string]string{"k": "a2"}
		if err := st.Save(ctx, &a2); err != nil {
			t.Fatalf("Save: %v", err)
		}
		assertEqual(t, mustLoad(t, st, a.ID), &a2)
		assertEqual(t, mustLoad(t, st, b.ID), b)
	})
}

// NewID returns a random token shaped like the ones session.Manager issues.
func NewID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// live returns a session that started a minute ago and is valid for 29 more.
func live(userKey string, values map[string]string) *session.Session {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &session.Session{
		ID:         NewID(),
		UserKey:    userKey,
		Values:     values,
		CreatedAt:  now.Add(-time.Minute),
		LastSeenAt: now.Add(-time.Minute),
		ExpiresAt:  now.Add(29 * time.Minute),
	}
}

// expired returns a session whose idle timeout ran out a minute ago.
func expired(userKey string) *session.Session {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &session.Session{
		ID:         NewID(),
		UserKey:    userKey,
		Values:     map[string]string{session.AttrBackendJWT: "old"},
		CreatedAt:  now.Add(-time.Hour),
		LastSeenAt: now.Add(-31 * time.Minute),
		ExpiresAt:  now.Add(-time.Minute),
	}
}

func mustCreate(t *testing.T, st session.Store, s *session.Session) {
	t.Helper()
	if err := st.Create(context.Background(), s); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

func mustLoad(t *testing.T, st session.Store, id string) *session.Session {
	t.Helper()
	s, err := st.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// assertEqual compares sessions field by field; times with Equal, nil and
// empty Values alike.
func assertEqual(t *testing.T, got, want *session.Session) {
	t.Helper()
	if got.ID != want.ID {
		t.Errorf("ID = %q, want %q", got.ID, want.ID)
	}
	if got.UserKey != want.UserKey {
		t.Errorf("UserKey = %q, want %q", got.UserKey, want.UserKey)
	}
	if len(got.Values) != len(want.Values) || !maps.Equal(got.Values, want.Values) {
		t.Errorf("Values = %#v, want %#v", got.Values, want.Values)
	}
	for _, f := range []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", got.CreatedAt, want.CreatedAt},
		{"LastSeenAt", got.LastSeenAt, want.LastSeenAt},
		{"ExpiresAt", got.ExpiresAt, want.ExpiresAt},
	} {
		if !f.got.Equal(f.want) {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
		if f.got.Location() != time.UTC {
			t.Errorf("%s is in %v, want UTC", f.name, f.got.Location())
		}
	}
}
