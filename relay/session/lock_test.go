package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

func TestManagerLock(t *testing.T) {
	ctx := context.Background()
	m := session.NewManager(session.NewDBStore(dbtest.SQLite(t)), session.Config{})
	id := sessiontest.NewID()
	release, err := m.Lock(ctx, id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := m.Lock(short, id, time.Minute); !errors.Is(err, session.ErrLockTimeout) {
		t.Fatalf("Lock of a held lease: %v, want ErrLockTimeout", err)
	}
	// A waiter gets the lease as soon as it is released.
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := m.Lock(wctx, id, time.Minute)
		if err == nil {
			r(ctx)
		}
		got <- err
	}()
	if err := release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiting Lock: %v", err)
	}
}

// A store that is not shared needs no lease.
func TestManagerLockWithoutLocker(t *testing.T) {
	m := session.NewManager(plainStore{session.NewDBStore(dbtest.SQLite(t))}, session.Config{})
	for range 2 {
		if _, err := m.Lock(context.Background(), sessiontest.NewID(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}

type plainStore struct{ session.Store }

func TestManagerLookupAndDelete(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	m := session.NewManager(session.NewDBStore(dbtest.SQLite(t)), session.Config{Now: clk.Now})
	w := httptest.NewRecorder()
	s, err := m.Start(ctx, w, httptest.NewRequest(http.MethodPost, "/", nil), "u", map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Lookup(ctx, s.ID)
	if err != nil || got.Values["k"] != "v" {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	if _, err := m.Lookup(ctx, "not-a-session-id"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Lookup(malformed) = %v, want ErrNotFound", err)
	}
	clk.set(s.CreatedAt, session.DefaultIdleTimeout+time.Second)
	if _, err := m.Lookup(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Lookup after the idle timeout = %v, want ErrNotFound", err)
	}
	clk.set(s.CreatedAt, 0)
	if err := m.Delete(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lookup(ctx, s.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Lookup after Delete = %v, want ErrNotFound", err)
	}
}

func TestSecureRequest(t *testing.T) {
	ctx := context.Background()
	viaProxy := func(r *http.Request) bool { return r.Header.Get("X-Test-HTTPS") == "1" }
	tests := []struct {
		name   string
		cfg    session.Config
		header string
		want   bool
	}{
		{"configured secure", session.Config{Secure: true}, "", true},
		{"dev config, plain request", session.Config{SecureRequest: viaProxy}, "", false},
		{"dev config, https via a trusted proxy", session.Config{SecureRequest: viaProxy}, "1", true},
		{"secure config is never weakened", session.Config{Secure: true, SecureRequest: viaProxy}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := session.NewManager(session.NewDBStore(dbtest.SQLite(t)), tt.cfg)
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			if tt.header != "" {
				r.Header.Set("X-Test-HTTPS", tt.header)
			}
			w := httptest.NewRecorder()
			if _, err := m.Start(ctx, w, r, "u", nil); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(w.Header().Get("Set-Cookie"), "; Secure"); got != tt.want {
				t.Fatalf("cookie %q: Secure = %v, want %v", w.Header().Get("Set-Cookie"), got, tt.want)
			}
		})
	}
}
