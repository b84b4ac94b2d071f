package session_test

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

// clock is a Config.Now the tests move by hand instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	// Start at the wall clock: the database store hides rows by wall-clock
	// expiry, and only moving forward keeps the Manager's checks the ones
	// under test.
	return &clock{t: time.Now().UTC().Truncate(time.Second)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// set moves the clock to start+d.
func (c *clock) set(start time.Time, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = start.Add(d)
}

// countingStore counts Save calls, to see when a read writes.
type countingStore struct {
	session.Store
	mu    sync.Mutex
	saves int
}

func (s *countingStore) Save(ctx context.Context, sess *session.Session) error {
	s.mu.Lock()
	s.saves++
	s.mu.Unlock()
	return s.Store.Save(ctx, sess)
}

func (s *countingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// errRefused stands for a store whose backend is down; it is not one of the
// package's errors, so the Manager has to classify it.
var errRefused = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

// faultyStore fails the operations named in fail.
type faultyStore struct {
	session.Store
	mu   sync.Mutex
	fail map[string]bool
}

func (s *faultyStore) failing(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail[op]
}

func (s *faultyStore) setFail(ops ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = map[string]bool{}
	for _, op := range ops {
		s.fail[op] = true
	}
}

func (s *faultyStore) Create(ctx context.Context, sess *session.Session) error {
	if s.failing("create") {
		return errRefused
	}
	return s.Store.Create(ctx, sess)
}

func (s *faultyStore) Load(ctx context.Context, id string) (*session.Session, error) {
	if s.failing("load") {
		return nil, errRefused
	}
	return s.Store.Load(ctx, id)
}

func (s *faultyStore) Save(ctx context.Context, sess *session.Session) error {
	if s.failing("save") {
		return errRefused
	}
	return s.Store.Save(ctx, sess)
}

func (s *faultyStore) Delete(ctx context.Context, id string) error {
	if s.failing("delete") {
		return errRefused
	}
	return s.Store.Delete(ctx, id)
}

// dbStore returns a database store on a fresh SQLite file. The Manager's
// logic does not depend on the dialect; the PostgreSQL store has its own suite.
func dbStore(t *testing.T) session.Store {
	return session.NewDBStore(dbtest.SQLite(t))
}

// start runs Start on a request carrying cookies and returns the session
// and the response.
func start(t *testing.T, m *session.Manager, userKey string, values map[string]string, cookies ...*http.Cookie) (*session.Session, *http.Response) {
	t.Helper()
	rec := httptest.NewRecorder()
	s, err := m.Start(context.Background(), rec, request(cookies...), userKey, values)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, rec.Result()
}

// request returns a request carrying cookies.
func request(cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/auth/external-login", nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

// cookieNamed returns the one Set-Cookie of res named name.
func cookieNamed(t *testing.T, res *http.Response, name string) *http.Cookie {
	t.Helper()
	var found []*http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == name {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("response sets %d cookies named %s, want 1 (Set-Cookie: %q)", len(found), name, res.Header.Values("Set-Cookie"))
	}
	return found[0]
}

func TestStartSetsCookie(t *testing.T) {
	tests := []struct {
		name     string
		cfg      session.Config
		wantName string
	}{
		{"production", session.Config{Secure: true}, "JSESSIONID"},
		{"development without Secure", session.Config{Secure: false}, "JSESSIONID"},
		{"custom name", session.Config{Secure: true, CookieName: "portal_session"}, "portal_session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := session.NewManager(dbStore(t), tt.cfg)
			s, res := start(t, m, "user-1", nil)
			c := cookieNamed(t, res, tt.wantName)

			if c.Value != s.ID {
				t.Errorf("cookie value = %q, want the session id %q", c.Value, s.ID)
			}
			if raw, err := base64.RawURLEncoding.DecodeString(c.Value); err != nil || len(raw) != 32 {
				t.Errorf("cookie value %q is not 32 bytes of base64url (%d bytes, %v)", c.Value, len(raw), err)
			}
			if !c.HttpOnly {
				t.Error("cookie is not HttpOnly")
			}
			if c.SameSite != http.SameSiteStrictMode {
				t.Errorf("SameSite = %v, want Strict", c.SameSite)
			}
			if c.Secure != tt.cfg.Secure {
				t.Errorf("Secure = %v, want %v", c.Secure, tt.cfg.Secure)
			}
			if c.Path != "/" {
				t.Errorf("Path = %q, want /", c.Path)
			}
			if c.MaxAge != 0 || !c.Expires.IsZero() || c.RawExpires != "" {
				t.Errorf("cookie has Max-Age %d / Expires %q, want a browser-session cookie", c.MaxAge, c.RawExpires)
			}
			if c.Domain != "" {
				t.Errorf("Domain = %q, want none (host-only)", c.Domain)
			}
		})
	}
}

func TestStartIssuesNewID(t *testing.T) {
	m := session.NewManager(dbStore(t), session.Config{})
	seen := map[string]bool{}
	var prev *http.Cookie
	for i := range 5 {
		var cookies []*http.Cookie
		if prev != nil {
			cookies = append(cookies, prev) // the same browser logging in again
		}
		s, res := start(t, m, "user-1", nil, cookies...)
		if seen[s.ID] {
			t.Fatalf("Start #%d reused id %q", i, s.ID)
		}
		seen[s.ID] = true
		prev = cookieNamed(t, res, "JSESSIONID")
	}
}

// Session fixation: a token the browser had before login must be dead after it.
func TestStartDeletesOldSession(t *testing.T) {
	tests := []struct {
		name   string
		cookie func(old *session.Session) *http.Cookie
	}{
		{"cookie of a live session", func(old *session.Session) *http.Cookie {
			return &http.Cookie{Name: "JSESSIONID", Value: old.ID}
		}},
		{"no cookie", func(*session.Session) *http.Cookie { return nil }},
		{"unknown token", func(*session.Session) *http.Cookie {
			return &http.Cookie{Name: "JSESSIONID", Value: sessiontest.NewID()}
		}},
		{"malformed token", func(*session.Session) *http.Cookie {
			return &http.Cookie{Name: "JSESSIONID", Value: "planted-by-attacker"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := dbStore(t)
			m := session.NewManager(st, session.Config{})
			old, _ := start(t, m, "", map[string]string{"k": "before login"})

			var cookies []*http.Cookie
			sent := tt.cookie(old)
			if sent != nil {
				cookies = append(cookies, sent)
			}
			s, res := start(t, m, "user-1", nil, cookies...)

			_, err := st.Load(ctx, old.ID)
			wantOldGone := sent != nil && sent.Value == old.ID
			if wantOldGone && !errors.Is(err, session.ErrNotFound) {
				t.Errorf("old session: Load error = %v, want ErrNotFound", err)
			}
			if !wantOldGone && err != nil {
				t.Errorf("unrelated session: Load error = %v, want it untouched", err)
			}
			if _, err := m.Get(ctx, request(&http.Cookie{Name: "JSESSIONID", Value: old.ID})); wantOldGone && !errors.Is(err, session.ErrNotFound) {
				t.Errorf("Get with the old cookie error = %v, want ErrNotFound", err)
			}
			got, err := m.Get(ctx, request(cookieNamed(t, res, "JSESSIONID")))
			if err != nil {
				t.Fatalf("Get with the new cookie: %v", err)
			}
			if got.ID != s.ID || got.UserKey != "user-1" || len(got.Values) != 0 {
				t.Errorf("new session = %+v, want id %q, user-1, no values", got, s.ID)
			}
		})
	}
}

func TestStartStoresUserKeyAndCopiesValues(t *testing.T) {
	m := session.NewManager(dbStore(t), session.Config{})
	values := map[string]string{session.AttrBackendJWT: "jwt-1"}
	_, res := start(t, m, "user-1", values)
	values[session.AttrBackendJWT] = "changed by the caller"

	got, err := m.Get(context.Background(), request(cookieNamed(t, res, "JSESSIONID")))
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.UserKey != "user-1" {
		t.Errorf("UserKey = %q, want user-1", got.UserKey)
	}
	if want := map[string]string{session.AttrBackendJWT: "jwt-1"}; !maps.Equal(got.Values, want) {
		t.Errorf("Values = %v, want %v", got.Values, want)
	}
}

func TestGetWithoutValidCookie(t *testing.T) {
	m := session.NewManager(dbStore(t), session.Config{})
	s, _ := start(t, m, "user-1", nil)
	tests := []struct {
		name    string
		cookies []*http.Cookie
	}{
		{"no cookie", nil},
		{"empty value", []*http.Cookie{{Name: "JSESSIONID", Value: ""}}},
		{"malformed value", []*http.Cookie{{Name: "JSESSIONID", Value: "not-a-token"}}},
		{"token under another name", []*http.Cookie{{Name: "SESSION", Value: s.ID}}},
		{"unknown token", []*http.Cookie{{Name: "JSESSIONID", Value: sessiontest.NewID()}}},
		{"token with a character changed", []*http.Cookie{{Name: "JSESSIONID", Value: flip(s.ID)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := m.Get(context.Background(), request(tt.cookies...)); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Get = %+v, %v; want ErrNotFound", got, err)
			}
		})
	}
}

// flip changes the first character of a token, keeping it well-formed.
func flip(id string) string {
	if id[0] == 'A' {
		return "B" + id[1:]
	}
	return "A" + id[1:]
}

// step is a Get at a time after Start, and whether the session should be there.
type step struct {
	at     time.Duration
	wantOK bool
}

// runSteps starts a session and runs the steps on clk.
func runSteps(t *testing.T, cfg session.Config, steps []step) {
	t.Helper()
	clk := newClock()
	cfg.Now = clk.Now
	m := session.NewManager(dbStore(t), cfg)
	t0 := clk.Now()
	s, res := start(t, m, "user-1", nil)
	c := cookieNamed(t, res, "JSESSIONID")
	for _, st := range steps {
		clk.set(t0, st.at)
		got, err := m.Get(context.Background(), request(c))
		switch {
		case st.wantOK && err != nil:
			t.Fatalf("Get at +%v: %v, want the session", st.at, err)
		case st.wantOK && got.ID != s.ID:
			t.Fatalf("Get at +%v returned id %q, want %q", st.at, got.ID, s.ID)
		case !st.wantOK && !errors.Is(err, session.ErrNotFound):
			t.Fatalf("Get at +%v = %v, want ErrNotFound", st.at, err)
		}
	}
}

func TestGetIdleTimeout(t *testing.T) {
	tests := []struct {
		name  string
		cfg   session.Config
		steps []step
	}{
		{"used after 20 minutes stays alive", session.Config{}, []step{
			{20 * time.Minute, true}, {49 * time.Minute, true},
		}},
		{"31 minutes idle ends it", session.Config{}, []step{
			{31 * time.Minute, false},
		}},
		{"exactly 30 minutes idle is still within", session.Config{}, []step{
			{30 * time.Minute, true},
		}},
		{"idle time counts from the last use", session.Config{}, []step{
			{20 * time.Minute, true}, {51 * time.Minute, false},
		}},
		{"an ended session stays ended", session.Config{}, []step{
			{31 * time.Minute, false}, {32 * time.Minute, false},
		}},
		{"configured idle timeout", session.Config{IdleTimeout: 5 * time.Minute}, []step{
			{4 * time.Minute, true}, {9 * time.Minute, true}, {14*time.Minute + time.Second, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.cfg, tt.steps) })
	}
}

func TestGetAbsoluteLifetime(t *testing.T) {
	busy := func(until time.Duration) []step {
		var steps []step
		for at := 20 * time.Minute; at <= until; at += 20 * time.Minute {
			steps = append(steps, step{at, true})
		}
		return steps
	}
	tests := []struct {
		name  string
		cfg   session.Config
		steps []step
	}{
		{"busy session lives 12 hours", session.Config{}, busy(12 * time.Hour)},
		{"busy session ends after 12 hours", session.Config{},
			append(busy(12*time.Hour), step{12*time.Hour + time.Minute, false})},
		{"configured lifetime", session.Config{MaxLifetime: time.Hour},
			append(busy(time.Hour), step{time.Hour + time.Second, false})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.cfg, tt.steps) })
	}
}

// ExpiresAt is capped by the lifetime, so a store's own expiry agrees with it.
func TestGetExpiresAtCappedByLifetime(t *testing.T) {
	clk := newClock()
	m := session.NewManager(dbStore(t), session.Config{Now: clk.Now})
	t0 := clk.Now()
	_, res := start(t, m, "user-1", nil)
	c := cookieNamed(t, res, "JSESSIONID")
	tests := []struct {
		name string
		at   time.Duration
		want time.Duration
	}{
		{"early: idle timeout", 20 * time.Minute, 50 * time.Minute},
		{"late: lifetime", 11*time.Hour + 50*time.Minute, 12 * time.Hour},
	}
	for _, tt := range tests {
		clk.set(t0, tt.at)
		got, err := m.Get(context.Background(), request(c))
		if err != nil {
			t.Fatalf("%s: Get: %v", tt.name, err)
		}
		if want := t0.Add(tt.want); !got.ExpiresAt.Equal(want) {
			t.Errorf("%s: ExpiresAt = %v, want %v", tt.name, got.ExpiresAt, want)
		}
		// Keep the session alive between the cases.
		for at := tt.at; at < 11*time.Hour+50*time.Minute; at += 20 * time.Minute {
			clk.set(t0, at)
			if _, err := m.Get(context.Background(), request(c)); err != nil {
				t.Fatalf("keep-alive Get at +%v: %v", at, err)
			}
		}
	}
}

func TestGetTouchThrottle(t *testing.T) {
	tests := []struct {
		name       string
		touchEvery time.Duration
		steps      []struct {
			at        time.Duration
			wantSaves int
		}
	}{
		{"default one minute", 0, []struct {
			at        time.Duration
			wantSaves int
		}{
			{0, 0},
			{30 * time.Second, 0},
			{time.Minute, 0}, // exactly TouchEvery old: not older, no write
			{time.Minute + time.Second, 1},
			{90 * time.Second, 1},
			{2*time.Minute + time.Second, 1}, // one minute after the write
			{2*time.Minute + 2*time.Second, 2},
		}},
		{"configured ten minutes", 10 * time.Minute, []struct {
			at        time.Duration
			wantSaves int
		}{
			{5 * time.Minute, 0},
			{10*time.Minute + time.Second, 1},
			{19 * time.Minute, 1},
			{21 * time.Minute, 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			st := &countingStore{Store: dbStore(t)}
			m := session.NewManager(st, session.Config{Now: clk.Now, TouchEvery: tt.touchEvery})
			t0 := clk.Now()
			_, res := start(t, m, "user-1", nil)
			c := cookieNamed(t, res, "JSESSIONID")
			lastWrite := t0
			for _, s := range tt.steps {
				clk.set(t0, s.at)
				before := st.count()
				got, err := m.Get(context.Background(), request(c))
				if err != nil {
					t.Fatalf("Get at +%v: %v", s.at, err)
				}
				if n := st.count(); n != s.wantSaves {
					t.Fatalf("after Get at +%v: %d saves, want %d", s.at, n, s.wantSaves)
				}
				if st.count() > before {
					lastWrite = t0.Add(s.at)
				}
				if !got.LastSeenAt.Equal(lastWrite) {
					t.Fatalf("Get at +%v: LastSeenAt = %v, want the last write %v", s.at, got.LastSeenAt, lastWrite)
				}
			}
		})
	}
}

func TestSave(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	m := session.NewManager(dbStore(t), session.Config{Now: clk.Now})
	t0 := clk.Now()
	_, res := start(t, m, "", nil)
	c := cookieNamed(t, res, "JSESSIONID")

	clk.set(t0, 10*time.Second)
	s, err := m.Get(ctx, request(c))
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	s.Values[session.AttrBackendJWT] = "jwt-1"
	s.Values[session.AttrBackendJWTExpiry] = "2026-11-22T10:00:00Z"
	if err := m.Save(ctx, s); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if want := t0.Add(10 * time.Second); !s.LastSeenAt.Equal(want) || !s.ExpiresAt.Equal(want.Add(30*time.Minute)) {
		t.Errorf("after Save LastSeenAt, ExpiresAt = %v, %v; want %v and 30 minutes later", s.LastSeenAt, s.ExpiresAt, want)
	}

	// Save counts as use: 30m5s after Start is past the idle timeout, but
	// only 29m55s after Save.
	clk.set(t0, 30*time.Minute+5*time.Second)
	got, err := m.Get(ctx, request(c))
	if err != nil {
		t.Fatalf("Get 30 minutes after Start, 29m55s after Save: %v", err)
	}
	if want := map[string]string{session.AttrBackendJWT: "jwt-1", session.AttrBackendJWTExpiry: "2026-11-22T10:00:00Z"}; !maps.Equal(got.Values, want) {
		t.Errorf("Values = %v, want %v", got.Values, want)
	}

	t.Run("expired session is not revived", func(t *testing.T) {
		clk.set(t0, 2*time.Hour)
		got.Values[session.AttrBackendJWT] = "jwt-late"
		if err := m.Save(ctx, got); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Save after expiry = %v, want ErrNotFound", err)
		}
		if _, err := m.Get(ctx, request(c)); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Get after Save of an expired session = %v, want ErrNotFound", err)
		}
	})
}

func TestEnd(t *testing.T) {
	tests := []struct {
		name       string
		cfg        session.Config
		withCookie bool
	}{
		{"with a session", session.Config{Secure: true}, true},
		{"with a session, development", session.Config{Secure: false}, true},
		{"without a cookie", session.Config{Secure: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := dbStore(t)
			m := session.NewManager(st, tt.cfg)
			s, res := start(t, m, "user-1", nil)
			started := cookieNamed(t, res, "JSESSIONID")
			var cookies []*http.Cookie
			if tt.withCookie {
				cookies = append(cookies, started)
			}

			rec := httptest.NewRecorder()
			if err := m.End(ctx, rec, request(cookies...)); err != nil {
				t.Fatalf("End: %v", err)
			}
			c := cookieNamed(t, rec.Result(), "JSESSIONID")
			if c.Value != "" || c.MaxAge != -1 {
				t.Errorf("cleared cookie: value %q, MaxAge %d; want empty and -1", c.Value, c.MaxAge)
			}
			if !strings.Contains(rec.Header().Get("Set-Cookie"), "Max-Age=0") {
				t.Errorf("Set-Cookie %q lacks Max-Age=0", rec.Header().Get("Set-Cookie"))
			}
			if c.Path != "/" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure != tt.cfg.Secure {
				t.Errorf("cleared cookie %+v does not repeat the session cookie's attributes", c)
			}

			_, err := st.Load(ctx, s.ID)
			if tt.withCookie && !errors.Is(err, session.ErrNotFound) {
				t.Errorf("after End: Load = %v, want ErrNotFound", err)
			}
			if !tt.withCookie && err != nil {
				t.Errorf("End without a cookie touched another session: Load = %v", err)
			}
			if _, err := m.Get(ctx, request(started)); tt.withCookie && !errors.Is(err, session.ErrNotFound) {
				t.Errorf("Get with the ended cookie = %v, want ErrNotFound", err)
			}
		})
	}
}

// A store outage must read as "try again" (503), never as "log in again",
// and must not lose the session.
func TestStoreUnavailable(t *testing.T) {
	tests := []struct {
		name       string
		failOps    []string
		advance    time.Duration // before the call, so Get writes LastSeenAt
		call       func(m *session.Manager, w http.ResponseWriter, c *http.Cookie) error
		wantCookie bool // whether the call may set a cookie anyway
	}{
		{"get: load fails", []string{"load"}, 0, func(m *session.Manager, _ http.ResponseWriter, c *http.Cookie) error {
			_, err := m.Get(context.Background(), request(c))
			return err
		}, false},
		{"get: touch fails", []string{"save"}, 5 * time.Minute, func(m *session.Manager, _ http.ResponseWriter, c *http.Cookie) error {
			_, err := m.Get(context.Background(), request(c))
			return err
		}, false},
		{"save fails", []string{"save"}, 0, func(m *session.Manager, _ http.ResponseWriter, c *http.Cookie) error {
			s := &session.Session{ID: c.Value, UserKey: "user-1", Values: map[string]string{"k": "lost"}}
			s.CreatedAt = time.Now().UTC().Truncate(time.Second)
			s.LastSeenAt = s.CreatedAt
			return m.Save(context.Background(), s)
		}, false},
		{"start: deleting the old session fails", []string{"delete"}, 0, func(m *session.Manager, w http.ResponseWriter, c *http.Cookie) error {
			_, err := m.Start(context.Background(), w, request(c), "user-2", nil)
			return err
		}, false},
		{"start: create fails", []string{"create"}, 0, func(m *session.Manager, w http.ResponseWriter, _ *http.Cookie) error {
			_, err := m.Start(context.Background(), w, request(), "user-2", nil)
			return err
		}, false},
		{"end: delete fails", []string{"delete"}, 0, func(m *session.Manager, w http.ResponseWriter, c *http.Cookie) error {
			return m.End(context.Background(), w, request(c))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock()
			st := &faultyStore{Store: dbStore(t)}
			m := session.NewManager(st, session.Config{Now: clk.Now})
			t0 := clk.Now()
			s, res := start(t, m, "user-1", map[string]string{"k": "kept"})
			c := cookieNamed(t, res, "JSESSIONID")

			clk.set(t0, tt.advance)
			st.setFail(tt.failOps...)
			rec := httptest.NewRecorder()
			err := tt.call(m, rec, c)
			if !errors.Is(err, session.ErrUnavailable) || errors.Is(err, session.ErrNotFound) {
				t.Fatalf("error = %v, want ErrUnavailable and not ErrNotFound", err)
			}
			if !errors.Is(err, errRefused) {
				t.Errorf("error = %v, want the store's error kept in the chain", err)
			}
			if got := rec.Header().Values("Set-Cookie"); !tt.wantCookie && len(got) != 0 {
				t.Errorf("Set-Cookie = %q, want none on failure", got)
			}

			st.setFail()
			got, err := m.Get(ctx, request(c))
			if err != nil {
				t.Fatalf("after the store recovered: Get = %v, want the session kept", err)
			}
			if got.ID != s.ID || got.Values["k"] != "kept" {
				t.Fatalf("after the store recovered: session = %+v, want %q with k=kept", got, s.ID)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	clk := newClock()
	m := session.NewManager(dbStore(t), session.Config{Now: clk.Now})
	t0 := clk.Now()
	s, res := start(t, m, "user-1", nil)
	if c := cookieNamed(t, res, session.DefaultCookieName); c.Name != "JSESSIONID" {
		t.Errorf("cookie name = %q, want JSESSIONID", c.Name)
	}
	if want := t0.Add(30 * time.Minute); !s.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want 30 minutes after start (%v)", s.ExpiresAt, want)
	}
	if !s.CreatedAt.Equal(t0) || s.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, want %v in UTC", s.CreatedAt, t0)
	}
}
