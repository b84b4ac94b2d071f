package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/redis/go-redis/v9"

	"portal/engine/dbtest"
	"portal/relay/hashlink"
	"portal/relay/session/sessiontest"
	"portal/relay/throttle"
)

const loginPath = "/api/auth/external-login"

// wrongHash is a well-formed hash that matches no user key.
const wrongHash = "0123456789abcdef0123456789abcdef"

func (env *testEnv) hashLogin(userKey, hash string, headers ...string) response {
	env.t.Helper()
	return env.do(env.newClient(), http.MethodPost, loginPath, map[string]string{"userKey": userKey, "hash": hash}, headers...)
}

// expectThrottled checks a 429 with a Retry-After of whole seconds, at most max.
func expectThrottled(t *testing.T, res response, max time.Duration) {
	t.Helper()
	if res.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", res.status, res.body)
	}
	secs, err := strconv.Atoi(res.header.Get("Retry-After"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > max+time.Second {
		t.Fatalf("Retry-After %q, want whole seconds from 1 to %s", res.header.Get("Retry-After"), max)
	}
	if res.header.Get("Set-Cookie") != "" {
		t.Fatalf("a refused sign-in set a cookie: %s", res.header.Get("Set-Cookie"))
	}
}

// Ten failures per user key by default; then 429 with the spec's body, even
// for the right hash, while other user keys still sign in.
func TestSignInThrottleAPI(t *testing.T) {
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{})
	for i := range 10 {
		res := env.hashLogin("demo", wrongHash)
		if res.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401 (a person retyping a link must not meet the limit)", i+1, res.status)
		}
	}
	res := env.hashLogin("demo", wrongHash)
	expectThrottled(t, res, 90*time.Second)
	expectHTTPError(t, res, http.StatusTooManyRequests, loginPath)

	res = env.hashLogin("demo", hashlink.Sign(testSecret, "demo"))
	expectThrottled(t, res, 90*time.Second)
	expectHTTPError(t, res, http.StatusTooManyRequests, loginPath)

	if res := env.hashLogin("member-2", hashlink.Sign(testSecret, "member-2")); res.status != http.StatusOK {
		t.Fatalf("another user key from the same address: %d %s, want 200", res.status, res.body)
	}
}

// Every kind of failed sign-in spends the budget; a well-formed request with
// the right hash does not.
func TestSignInThrottleCountsEveryFailure(t *testing.T) {
	tests := []struct {
		name string
		body any
	}{
		{"wrong hash", map[string]string{"userKey": "demo", "hash": wrongHash}},
		{"missing hash", map[string]string{"userKey": "demo"}},
		{"missing user key", map[string]string{"hash": wrongHash}},
		{"user key out of the alphabet", map[string]string{"userKey": "demo\x00", "hash": hashlink.Sign(testSecret, "demo\x00")}},
		{"user key too long", map[string]string{"userKey": strings.Repeat("a", 201), "hash": wrongHash}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnvWith(t, dbtest.SQLite(t), envOptions{limits: throttle.SignInConfig{
				PerAddress: throttle.Limit{Burst: 3, Period: time.Hour}}})
			for i := range 3 {
				if res := env.do(env.newClient(), http.MethodPost, loginPath, tc.body); res.status != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d %s, want 401", i+1, res.status, res.body)
				}
			}
			expectThrottled(t, env.hashLogin("fresh-key", hashlink.Sign(testSecret, "fresh-key")), 20*time.Minute)
		})
	}
}

// Fifty failures per address by default, whatever user keys they name.
func TestSignInThrottlePerAddress(t *testing.T) {
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{})
	for i := range 50 {
		if res := env.hashLogin(fmt.Sprint("guess-", i), wrongHash); res.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, res.status)
		}
	}
	res := env.hashLogin("demo", hashlink.Sign(testSecret, "demo"))
	expectThrottled(t, res, 18*time.Second)
	expectHTTPError(t, res, http.StatusTooManyRequests, loginPath)
}

// Successful sign-ins spend nothing: a club office (or a load test) behind
// one address signs in hundreds of members, and that address still has its
// whole budget of failures afterwards.
func TestSignInThrottleSuccessesAreFree(t *testing.T) {
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{})
	for i := range 300 {
		key := fmt.Sprint("member-", i%40)
		if res := env.hashLogin(key, hashlink.Sign(testSecret, key)); res.status != http.StatusOK {
			t.Fatalf("successful login %d: %d %s", i+1, res.status, res.body)
		}
	}
	for i := range 50 {
		if res := env.hashLogin(fmt.Sprint("guess-", i), wrongHash); res.status != http.StatusUnauthorized {
			t.Fatalf("failure %d after 300 successes: %d, want 401", i+1, res.status)
		}
	}
	expectThrottled(t, env.hashLogin("guess-x", wrongHash), 18*time.Second)
}

// A failure the backend is not to blame for (it is down) is not the
// member's: only its refusal counts.
func TestSignInThrottleBackend(t *testing.T) {
	var mode atomic.Value
	mode.Store("reject")
	var calls atomic.Int32
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch mode.Load().(string) {
		case "reject":
			http.Error(w, `{"error":"unknown user"}`, http.StatusUnauthorized)
		case "fail":
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		default:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"token": "backend-jwt"})
		}
	}))
	t.Cleanup(be.Close)
	u, _ := url.Parse(be.URL)
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{backend: u,
		limits: throttle.SignInConfig{PerUserKey: throttle.Limit{Burst: 3, Period: time.Hour}}})
	good := hashlink.Sign(testSecret, "demo")

	mode.Store("fail")
	for i := range 5 {
		if res := env.hashLogin("demo", good); res.status != http.StatusBadGateway {
			t.Fatalf("backend down, attempt %d: %d, want 502", i+1, res.status)
		}
	}
	mode.Store("ok")
	if res := env.hashLogin("demo", good); res.status != http.StatusOK {
		t.Fatalf("backend up again: %d %s, want 200 (its failures are not the member's)", res.status, res.body)
	}
	mode.Store("reject")
	for i := range 3 {
		if res := env.hashLogin("demo", good); res.status != http.StatusUnauthorized {
			t.Fatalf("backend refusal %d: %d, want 401", i+1, res.status)
		}
	}
	before := calls.Load()
	expectThrottled(t, env.hashLogin("demo", good), time.Hour)
	if calls.Load() != before {
		t.Fatal("a throttled sign-in still asked the backend")
	}
}

// The hash link answers a browser with a page: 429, HTML, Retry-After.
func TestSignInThrottleHashLink(t *testing.T) {
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{})
	good := "/membership/register/1?u=demo&h=" + hashlink.Sign(testSecret, "demo")
	if res := env.do(env.newClient(), http.MethodGet, good, nil); res.status != http.StatusSeeOther || res.header.Get("Location") != "/membership/register/1" {
		t.Fatalf("a good link: %d %s, want 303 to the clean address", res.status, res.header.Get("Location"))
	}
	failures := []string{
		"/membership/register/1?u=demo&h=" + wrongHash,
		"/membership/register/1/demo?h=" + wrongHash, // the user key in the path is the same key
		"/membership/register/1?u=demo",              // missing hash
	}
	for i := range 10 {
		path := failures[i%len(failures)]
		res := env.do(env.newClient(), http.MethodGet, path, nil)
		if res.status != http.StatusSeeOther || !strings.Contains(res.header.Get("Location"), "?error=") {
			t.Fatalf("failure %d (%s): %d %s, want 303 to access denied", i+1, path, res.status, res.header.Get("Location"))
		}
	}
	for _, path := range []string{failures[0], good, "/membership/register/1/demo?h=" + hashlink.Sign(testSecret, "demo")} {
		res := env.do(env.newClient(), http.MethodGet, path, nil, "Accept", "text/html")
		expectThrottled(t, res, 90*time.Second)
		if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("%s: Content-Type %q, want a page", path, ct)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.body))
		if err != nil {
			t.Fatal(err)
		}
		if text := doc.Find(`[data-testid="error-page"]`).Text(); !strings.Contains(strings.ToLower(text), "too many") {
			t.Fatalf("%s: the page does not say why: %q", path, strings.TrimSpace(text))
		}
	}
	// The link page and the API share one budget per user key.
	expectThrottled(t, env.hashLogin("demo", hashlink.Sign(testSecret, "demo")), 90*time.Second)
}

// The budget belongs to the real client address: X-Forwarded-For counts
// only from a trusted proxy.
func TestSignInThrottleForwardedFor(t *testing.T) {
	t.Run("spoofed by an untrusted peer", func(t *testing.T) {
		env := newEnvWith(t, dbtest.SQLite(t), envOptions{})
		for i := range 50 {
			env.hashLogin(fmt.Sprint("guess-", i), wrongHash, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
		}
		expectThrottled(t, env.hashLogin("guess-x", wrongHash, "X-Forwarded-For", "203.0.113.99"), 18*time.Second)
	})
	t.Run("from a trusted proxy", func(t *testing.T) {
		env := newEnvWith(t, dbtest.SQLite(t), envOptions{trustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
		for i := range 50 {
			env.hashLogin(fmt.Sprint("guess-", i), wrongHash, "X-Forwarded-For", "203.0.113.1")
		}
		expectThrottled(t, env.hashLogin("guess-x", wrongHash, "X-Forwarded-For", "203.0.113.1"), 18*time.Second)
		if res := env.hashLogin("guess-x", wrongHash, "X-Forwarded-For", "203.0.113.2"); res.status != http.StatusUnauthorized {
			t.Fatalf("another client behind the proxy: %d, want 401 (a budget of its own)", res.status)
		}
	})
}

// A failed sign-in is logged at warn with the request id, the client
// address and the user key (cut short), never the hash.
func TestSignInFailureLog(t *testing.T) {
	logs := &logBuffer{}
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{log: logs})
	secretish := "fedcba9876543210fedcba9876543210"
	env.hashLogin("demo", secretish)
	env.do(env.newClient(), http.MethodGet, "/membership/register/1?u=link-user&h="+secretish, nil)
	long := strings.Repeat("k", 300)
	env.hashLogin(long, secretish)
	good := hashlink.Sign(testSecret, "demo")
	env.hashLogin("demo", good)

	if l := logs.lines("level=WARN", "client=127.0.0.1", "user_key=demo"); len(l) != 1 {
		t.Errorf("API failure: %d warn lines with client and user key, want 1:\n%s", len(l), logs)
	}
	if l := logs.lines("level=WARN", "client=127.0.0.1", "user_key=link-user"); len(l) != 1 {
		t.Errorf("hash link failure: %d warn lines with client and user key, want 1:\n%s", len(l), logs)
	}
	if l := logs.lines("level=WARN", "user_key=\""+strings.Repeat("k", 64)+"…"); len(l) != 1 || strings.Contains(l[0], strings.Repeat("k", 65)) {
		t.Errorf("a long user key is not logged cut to 64 characters:\n%s", logs)
	}
	if strings.Contains(logs.String(), secretish) || strings.Contains(logs.String(), good) {
		t.Errorf("a hash reached the log:\n%s", logs)
	}
	for _, l := range logs.lines("level=WARN") {
		if !strings.Contains(l, "request_id=") {
			t.Errorf("a warn line about a request without its request id: %s", l)
		}
	}
}

// With Redis, every instance sees the failures of every other.
func TestSignInThrottleRedisShared(t *testing.T) {
	rdb := sessiontest.Redis(t)
	prefix := sessiontest.RedisPrefix(t, rdb) + "throttle:"
	t.Cleanup(func() { // redis_rate puts "rate:" before every key
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "rate:"+prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	instance := func() *testEnv {
		client := redis.NewClient(rdb.Options()) // a client of each instance's own
		t.Cleanup(func() { client.Close() })
		return newEnvWith(t, dbtest.SQLite(t), envOptions{limiter: throttle.NewRedis(client, prefix)})
	}
	a, b := instance(), instance()
	for i := range 5 {
		if res := a.hashLogin("demo", wrongHash); res.status != http.StatusUnauthorized {
			t.Fatalf("a, failure %d: %d", i+1, res.status)
		}
		if res := b.hashLogin("demo", wrongHash); res.status != http.StatusUnauthorized {
			t.Fatalf("b, failure %d: %d", i+1, res.status)
		}
	}
	expectThrottled(t, a.hashLogin("demo", hashlink.Sign(testSecret, "demo")), 90*time.Second)
	expectThrottled(t, b.hashLogin("demo", hashlink.Sign(testSecret, "demo")), 90*time.Second)
}

// A limiter whose store is down lets sign-ins through (and says so at
// warn) rather than locking every member out.
func TestSignInThrottleFailsOpen(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { down.Close() })
	logs := &logBuffer{}
	env := newEnvWith(t, dbtest.SQLite(t), envOptions{log: logs, limiter: throttle.NewRedis(down, "")})
	if res := env.hashLogin("demo", wrongHash); res.status != http.StatusUnauthorized {
		t.Fatalf("wrong hash: %d %s, want 401", res.status, res.body)
	}
	if res := env.hashLogin("demo", hashlink.Sign(testSecret, "demo")); res.status != http.StatusOK {
		t.Fatalf("right hash: %d %s, want 200", res.status, res.body)
	}
	if l := logs.lines("level=WARN", "throttle"); len(l) == 0 {
		t.Fatalf("no warning that the throttle is unavailable:\n%s", logs)
	}
}
