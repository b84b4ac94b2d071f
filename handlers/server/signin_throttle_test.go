package server_test

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
	"portal/handlers/handlertest"
	"portal/relay/hashlink"
	"portal/relay/session/sessiontest"
	"portal/relay/throttle"
)

const loginPath = "/api/auth/external-login"

// wrongHash is a well-formed hash that matches no user key.
const wrongHash = "0123456789abcdef0123456789abcdef"

func hashLogin(env *handlertest.Env, userKey, hash string, headers ...string) handlertest.Response {
	env.TB.Helper()
	return env.Do(env.NewClient(), http.MethodPost, loginPath, map[string]string{"userKey": userKey, "hash": hash}, headers...)
}

// expectThrottled checks a 429 with a Retry-After of whole seconds, at most max.
func expectThrottled(t *testing.T, res handlertest.Response, max time.Duration) {
	t.Helper()
	if res.Status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", res.Status, res.Body)
	}
	secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > max+time.Second {
		t.Fatalf("Retry-After %q, want whole seconds from 1 to %s", res.Header.Get("Retry-After"), max)
	}
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatalf("a refused sign-in set a cookie: %s", res.Header.Get("Set-Cookie"))
	}
}

// Ten failures per user key by default; then 429 with the spec's body, even
// for the right hash, while other user keys still sign in.
func TestSignInThrottleAPI(t *testing.T) {
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
	for i := range 10 {
		res := hashLogin(env, "demo", wrongHash)
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401 (a person retyping a link must not meet the limit)", i+1, res.Status)
		}
	}
	res := hashLogin(env, "demo", wrongHash)
	expectThrottled(t, res, 90*time.Second)
	handlertest.ExpectHTTPError(t, res, http.StatusTooManyRequests, loginPath)

	res = hashLogin(env, "demo", hashlink.Sign(handlertest.HashSecret, "demo"))
	expectThrottled(t, res, 90*time.Second)
	handlertest.ExpectHTTPError(t, res, http.StatusTooManyRequests, loginPath)

	if res := hashLogin(env, "member-2", hashlink.Sign(handlertest.HashSecret, "member-2")); res.Status != http.StatusOK {
		t.Fatalf("another user key from the same address: %d %s, want 200", res.Status, res.Body)
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
		{"user key out of the alphabet", map[string]string{"userKey": "demo\x00", "hash": hashlink.Sign(handlertest.HashSecret, "demo\x00")}},
		{"user key too long", map[string]string{"userKey": strings.Repeat("a", 201), "hash": wrongHash}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Limits: throttle.SignInConfig{
				PerAddress: throttle.Limit{Burst: 3, Period: time.Hour}}})
			for i := range 3 {
				if res := env.Do(env.NewClient(), http.MethodPost, loginPath, tc.body); res.Status != http.StatusUnauthorized {
					t.Fatalf("failure %d: %d %s, want 401", i+1, res.Status, res.Body)
				}
			}
			expectThrottled(t, hashLogin(env, "fresh-key", hashlink.Sign(handlertest.HashSecret, "fresh-key")), 20*time.Minute)
		})
	}
}

// Fifty failures per address by default, whatever user keys they name.
func TestSignInThrottlePerAddress(t *testing.T) {
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
	for i := range 50 {
		if res := hashLogin(env, fmt.Sprint("guess-", i), wrongHash); res.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, res.Status)
		}
	}
	res := hashLogin(env, "demo", hashlink.Sign(handlertest.HashSecret, "demo"))
	expectThrottled(t, res, 18*time.Second)
	handlertest.ExpectHTTPError(t, res, http.StatusTooManyRequests, loginPath)
}

// Successful sign-ins spend nothing: a club office (or a load test) behind
// one address signs in hundreds of members, and that address still has its
// whole budget of failures afterwards.
func TestSignInThrottleSuccessesAreFree(t *testing.T) {
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
	for i := range 300 {
		key := fmt.Sprint("member-", i%40)
		if res := hashLogin(env, key, hashlink.Sign(handlertest.HashSecret, key)); res.Status != http.StatusOK {
			t.Fatalf("successful login %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	for i := range 50 {
		if res := hashLogin(env, fmt.Sprint("guess-", i), wrongHash); res.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d after 300 successes: %d, want 401", i+1, res.Status)
		}
	}
	expectThrottled(t, hashLogin(env, "guess-x", wrongHash), 18*time.Second)
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
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Backend: u,
		Limits: throttle.SignInConfig{PerUserKey: throttle.Limit{Burst: 3, Period: time.Hour}}})
	good := hashlink.Sign(handlertest.HashSecret, "demo")

	mode.Store("fail")
	for i := range 5 {
		if res := hashLogin(env, "demo", good); res.Status != http.StatusBadGateway {
			t.Fatalf("backend down, attempt %d: %d, want 502", i+1, res.Status)
		}
	}
	mode.Store("ok")
	if res := hashLogin(env, "demo", good); res.Status != http.StatusOK {
		t.Fatalf("backend up again: %d %s, want 200 (its failures are not the member's)", res.Status, res.Body)
	}
	mode.Store("reject")
	for i := range 3 {
		if res := hashLogin(env, "demo", good); res.Status != http.StatusUnauthorized {
			t.Fatalf("backend refusal %d: %d, want 401", i+1, res.Status)
		}
	}
	before := calls.Load()
	expectThrottled(t, hashLogin(env, "demo", good), time.Hour)
	if calls.Load() != before {
		t.Fatal("a throttled sign-in still asked the backend")
	}
}

// The hash link answers a browser with a page: 429, HTML, Retry-After.
func TestSignInThrottleHashLink(t *testing.T) {
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
	good := "/membership/register/1?u=demo&h=" + hashlink.Sign(handlertest.HashSecret, "demo")
	if res := env.Do(env.NewClient(), http.MethodGet, good, nil); res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/membership/register/1" {
		t.Fatalf("a good link: %d %s, want 303 to the clean address", res.Status, res.Header.Get("Location"))
	}
	failures := []string{
		"/membership/register/1?u=demo&h=" + wrongHash,
		"/membership/register/1/demo?h=" + wrongHash, // the user key in the path is the same key
		"/membership/register/1?u=demo",              // missing hash
	}
	for i := range 10 {
		path := failures[i%len(failures)]
		res := env.Do(env.NewClient(), http.MethodGet, path, nil)
		if res.Status != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "?error=") {
			t.Fatalf("failure %d (%s): %d %s, want 303 to access denied", i+1, path, res.Status, res.Header.Get("Location"))
		}
	}
	for _, path := range []string{failures[0], good, "/membership/register/1/demo?h=" + hashlink.Sign(handlertest.HashSecret, "demo")} {
		res := env.Do(env.NewClient(), http.MethodGet, path, nil, "Accept", "text/html")
		expectThrottled(t, res, 90*time.Second)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("%s: Content-Type %q, want a page", path, ct)
		}
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.Body))
		if err != nil {
			t.Fatal(err)
		}
		if text := doc.Find(`[data-testid="error-page"]`).Text(); !strings.Contains(strings.ToLower(text), "too many") {
			t.Fatalf("%s: the page does not say why: %q", path, strings.TrimSpace(text))
		}
	}
	// The link page and the API share one budget per user key.
	expectThrottled(t, hashLogin(env, "demo", hashlink.Sign(handlertest.HashSecret, "demo")), 90*time.Second)
}

// The budget belongs to the real client address: X-Forwarded-For counts
// only from a trusted proxy.
func TestSignInThrottleForwardedFor(t *testing.T) {
	t.Run("spoofed by an untrusted peer", func(t *testing.T) {
		env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{})
		for i := range 50 {
			hashLogin(env, fmt.Sprint("guess-", i), wrongHash, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
		}
		expectThrottled(t, hashLogin(env, "guess-x", wrongHash, "X-Forwarded-For", "203.0.113.99"), 18*time.Second)
	})
	t.Run("from a trusted proxy", func(t *testing.T) {
		env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
		for i := range 50 {
			hashLogin(env, fmt.Sprint("guess-", i), wrongHash, "X-Forwarded-For", "203.0.113.1")
		}
		expectThrottled(t, hashLogin(env, "guess-x", wrongHash, "X-Forwarded-For", "203.0.113.1"), 18*time.Second)
		if res := hashLogin(env, "guess-x", wrongHash, "X-Forwarded-For", "203.0.113.2"); res.Status != http.StatusUnauthorized {
			t.Fatalf("another client behind the proxy: %d, want 401 (a budget of its own)", res.Status)
		}
	})
}

// A failed sign-in is logged at warn with the request id, the client
// address and the user key (cut short), never the hash.
func TestSignInFailureLog(t *testing.T) {
	logs := &handlertest.LogBuffer{}
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: logs})
	secretish := "fedcba9876543210fedcba9876543210"
	hashLogin(env, "demo", secretish)
	env.Do(env.NewClient(), http.MethodGet, "/membership/register/1?u=link-user&h="+secretish, nil)
	long := strings.Repeat("k", 300)
	hashLogin(env, long, secretish)
	good := hashlink.Sign(handlertest.HashSecret, "demo")
	hashLogin(env, "demo", good)

	if l := logs.Lines("level=WARN", "client=127.0.0.1", "user_key=demo"); len(l) != 1 {
		t.Errorf("API failure: %d warn lines with client and user key, want 1:\n%s", len(l), logs)
	}
	if l := logs.Lines("level=WARN", "client=127.0.0.1", "user_key=link-user"); len(l) != 1 {
		t.Errorf("hash link failure: %d warn lines with client and user key, want 1:\n%s", len(l), logs)
	}
	if l := logs.Lines("level=WARN", "user_key=\""+strings.Repeat("k", 64)+"…"); len(l) != 1 || strings.Contains(l[0], strings.Repeat("k", 65)) {
		t.Errorf("a long user key is not logged cut to 64 characters:\n%s", logs)
	}
	if strings.Contains(logs.String(), secretish) || strings.Contains(logs.String(), good) {
		t.Errorf("a hash reached the log:\n%s", logs)
	}
	for _, l := range logs.Lines("level=WARN") {
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
	instance := func() *handlertest.Env {
		client := redis.NewClient(rdb.Options()) // a client of each instance's own
		t.Cleanup(func() { client.Close() })
		return handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Limiter: throttle.NewRedis(client, prefix)})
	}
	a, b := instance(), instance()
	for i := range 5 {
		if res := hashLogin(a, "demo", wrongHash); res.Status != http.StatusUnauthorized {
			t.Fatalf("a, failure %d: %d", i+1, res.Status)
		}
		if res := hashLogin(b, "demo", wrongHash); res.Status != http.StatusUnauthorized {
			t.Fatalf("b, failure %d: %d", i+1, res.Status)
		}
	}
	expectThrottled(t, hashLogin(a, "demo", hashlink.Sign(handlertest.HashSecret, "demo")), 90*time.Second)
	expectThrottled(t, hashLogin(b, "demo", hashlink.Sign(handlertest.HashSecret, "demo")), 90*time.Second)
}

// A limiter whose store is down lets sign-ins through (and says so at
// warn) rather than locking every member out.
func TestSignInThrottleFailsOpen(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { down.Close() })
	logs := &handlertest.LogBuffer{}
	env := handlertest.NewEnvWith(t, dbtest.SQLite(t), handlertest.Options{Log: logs, Limiter: throttle.NewRedis(down, "")})
	if res := hashLogin(env, "demo", wrongHash); res.Status != http.StatusUnauthorized {
		t.Fatalf("wrong hash: %d %s, want 401", res.Status, res.Body)
	}
	if res := hashLogin(env, "demo", hashlink.Sign(handlertest.HashSecret, "demo")); res.Status != http.StatusOK {
		t.Fatalf("right hash: %d %s, want 200", res.Status, res.Body)
	}
	if l := logs.Lines("level=WARN", "throttle"); len(l) == 0 {
		t.Fatalf("no warning that the throttle is unavailable:\n%s", logs)
	}
}
