package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"portal/cmd/portal/config"
	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/throttle"
)

func TestGatewayConfig(t *testing.T) {
	key := session.GenerateKey()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"PORTAL_HASH_SECRET", "0123456789abcdef0123", "PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false"}
	backend := append(append([]string{}, base...), "PORTAL_ADMIN_BACKEND_URL", "https://admin.example/root", "PORTAL_API_KEY", "api-key-value-123", "PORTAL_SESSION_KEY", key)
	OIDCOn := append(append([]string{}, backend...), "PORTAL_OIDC_ISSUER", "https://idp.example/realms/x", "PORTAL_OIDC_CLIENT_ID", "portal", "PORTAL_OIDC_CLIENT_SECRET", "client-secret-456")
	with := func(pairs []string, more ...string) []string { return append(append([]string{}, pairs...), more...) }
	tests := []struct {
		name    string
		env     []string
		wantErr []string
	}{
		{"nothing configured: relay and OIDC off", base, nil},
		{"backend with key and session key", backend, nil},
		{"backend and OIDC", OIDCOn, nil},
		{"session key from a file", with(backend[:len(backend)-2], "PORTAL_SESSION_KEY_FILE", keyFile), nil},
		{"redis store", with(base, "PORTAL_SESSION_STORE", "redis", "PORTAL_REDIS_URL", "redis://127.0.0.1:6379/0", "PORTAL_SESSION_KEY", key), nil},
		{"trusted proxies", with(base, "PORTAL_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.10 ,::1"), nil},
		{"backend without api key", with(base, "PORTAL_ADMIN_BACKEND_URL", "https://admin.example", "PORTAL_SESSION_KEY", key), []string{"PORTAL_API_KEY"}},
		{"backend without session key", with(base, "PORTAL_ADMIN_BACKEND_URL", "https://admin.example", "PORTAL_API_KEY", "k"), []string{"PORTAL_SESSION_KEY"}},
		{"bad backend url", with(backend, "PORTAL_ADMIN_BACKEND_URL", "admin.example"), []string{"PORTAL_ADMIN_BACKEND_URL"}},
		{"backend url with user info", with(backend, "PORTAL_ADMIN_BACKEND_URL", "https://u:p@admin.example"), []string{"PORTAL_ADMIN_BACKEND_URL"}},
		{"weak session key", with(backend, "PORTAL_SESSION_KEY", "password"), []string{"PORTAL_SESSION_KEY"}},
		{"prefix shadows the API", with(backend, "PORTAL_RELAY_PREFIX", "/api"), []string{"PORTAL_RELAY_PREFIX"}},
		{"prefix with dots", with(backend, "PORTAL_RELAY_PREFIX", "/services/../api"), []string{"PORTAL_RELAY_PREFIX"}},
		{"prefix not a path", with(backend, "PORTAL_RELAY_PREFIX", "services"), []string{"PORTAL_RELAY_PREFIX"}},
		{"bad timeout", with(backend, "PORTAL_RELAY_RESPONSE_TIMEOUT", "soon"), []string{"PORTAL_RELAY_RESPONSE_TIMEOUT"}},
		{"bad body limit", with(backend, "PORTAL_RELAY_MAX_BODY", "lots"), []string{"PORTAL_RELAY_MAX_BODY"}},
		{"oidc without backend: staff sign-in only", with(base, "PORTAL_OIDC_ISSUER", "https://idp.example", "PORTAL_OIDC_CLIENT_ID", "p", "PORTAL_SESSION_KEY", key), nil},
		{"oidc without client id", with(backend, "PORTAL_OIDC_ISSUER", "https://idp.example"), []string{"PORTAL_OIDC_CLIENT_ID"}},
		{"oidc over plain http", with(OIDCOn, "PORTAL_OIDC_ISSUER", "http://idp.example"), []string{"https"}},
		{"oidc over http on loopback", with(OIDCOn, "PORTAL_OIDC_ISSUER", "http://127.0.0.1:9000/realms/x"), nil},
		{"unknown store", with(base, "PORTAL_SESSION_STORE", "memcached"), []string{"PORTAL_SESSION_STORE"}},
		{"redis without url", with(base, "PORTAL_SESSION_STORE", "redis", "PORTAL_SESSION_KEY", key), []string{"PORTAL_REDIS_URL"}},
		{"redis url with the database store: shared sign-in limits", with(base, "PORTAL_REDIS_URL", "redis://127.0.0.1:6379/0"), nil},
		{"bad redis url with the database store", with(base, "PORTAL_REDIS_URL", "memcached://127.0.0.1"), []string{"PORTAL_REDIS_URL"}},
		{"redis without session key", with(base, "PORTAL_SESSION_STORE", "redis", "PORTAL_REDIS_URL", "redis://127.0.0.1:6379/0"), []string{"PORTAL_SESSION_KEY"}},
		{"session cache off", with(base, "PORTAL_SESSION_CACHE", "0"), nil},
		{"bad session cache", with(base, "PORTAL_SESSION_CACHE", "-1s"), []string{"PORTAL_SESSION_CACHE"}},
		{"session cache too long", with(base, "PORTAL_SESSION_CACHE", "1h"), []string{"PORTAL_SESSION_CACHE"}},
		{"session cache not a duration", with(base, "PORTAL_SESSION_CACHE", "on"), []string{"PORTAL_SESSION_CACHE"}},
		{"bad proxy", with(base, "PORTAL_TRUSTED_PROXIES", "proxy.example"), []string{"PORTAL_TRUSTED_PROXIES"}},
		{"trusted relay paths", with(backend, "PORTAL_RELAY_TRUSTED_PATHS", "/swagger-ui, /v3/api-docs/"), nil},
		{"trusted relay path not a path", with(backend, "PORTAL_RELAY_TRUSTED_PATHS", "swagger-ui"), []string{"PORTAL_RELAY_TRUSTED_PATHS"}},
		{"trusted relay path with dots", with(backend, "PORTAL_RELAY_TRUSTED_PATHS", "/docs/../admin"), []string{"PORTAL_RELAY_TRUSTED_PATHS"}},
		{"trusted relay path: all of it", with(backend, "PORTAL_RELAY_TRUSTED_PATHS", "/"), []string{"PORTAL_RELAY_TRUSTED_PATHS"}},
		{"allowed backend cookies", with(backend, "PORTAL_RELAY_ALLOWED_COOKIES", "XSRF-TOKEN, backend_pref"), nil},
		{"allowed cookie: the session's", with(backend, "PORTAL_RELAY_ALLOWED_COOKIES", "backend_pref,JSESSIONID"), []string{"PORTAL_RELAY_ALLOWED_COOKIES", "JSESSIONID"}},
		{"allowed cookie: a login attempt's", with(backend, "PORTAL_RELAY_ALLOWED_COOKIES", "portal_login_0123456789abcdef"), []string{"PORTAL_RELAY_ALLOWED_COOKIES"}},
		{"allowed cookie: not a name", with(backend, "PORTAL_RELAY_ALLOWED_COOKIES", "a b"), []string{"PORTAL_RELAY_ALLOWED_COOKIES"}},
		{"every problem at once", with(base, "PORTAL_ADMIN_BACKEND_URL", "nope", "PORTAL_RELAY_PREFIX", "x", "PORTAL_SESSION_STORE", "x"),
			[]string{"PORTAL_ADMIN_BACKEND_URL", "PORTAL_API_KEY", "PORTAL_RELAY_PREFIX", "PORTAL_SESSION_STORE", "PORTAL_SESSION_KEY"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := config.Load(newFlagSet("test", &strings.Builder{}), nil, env(tc.env...))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.ValidateServe()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("ValidateServe: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateServe accepted it, want errors naming %v", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestGatewaySecretsMasked(t *testing.T) {
	key := session.GenerateKey()
	out, err := runCmd(t, env("PORTAL_API_KEY", "api-key-value-123", "PORTAL_OIDC_CLIENT_SECRET", "client-secret-456",
		"PORTAL_SESSION_KEY", key, "PORTAL_REDIS_URL", "redis://:redis-pw-789@cache:6379/0", "PORTAL_METRICS_TOKEN", "metrics-tok-000"), "config")
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"api-key-value-123", "client-secret-456", key, "redis-pw-789", "metrics-tok-000"} {
		if strings.Contains(out, secret) {
			t.Errorf("config output shows a secret %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"PORTAL_API_KEY=****", "PORTAL_SESSION_KEY=****", "PORTAL_REDIS_URL=redis://:xxxxx@cache:6379/0",
		"PORTAL_RELAY_PREFIX=/services/admin-service", "PORTAL_SESSION_STORE=db", "PORTAL_OIDC_SCOPES=openid profile email"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("config output lacks %q:\n%s", want, out)
		}
	}
}

// The relay gets the public address and the operator's trusted paths and
// allowed cookies.
func TestBuildGatewayRelaySettings(t *testing.T) {
	_, g := servedGateway(t, dbtest.SQLite(t), []string{"--relay-allowed-cookies", "XSRF-TOKEN, backend_pref"},
		env("PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "stripe", "PORTAL_STRIPE_SECRET_KEY", "sk_test_1",
			"PORTAL_STRIPE_WEBHOOK_SECRET", "whsec_1",
			"PORTAL_ADMIN_BACKEND_URL", "http://127.0.0.1:1", "PORTAL_API_KEY", "k", "PORTAL_SESSION_KEY", session.GenerateKey(),
			"PORTAL_BASE_URL", "https://portal.example/", "PORTAL_RELAY_TRUSTED_PATHS", "/swagger-ui,/v3/api-docs/"))
	u := g.relay.Upstream
	if u.PublicURL == nil || u.PublicURL.String() != "https://portal.example" {
		t.Errorf("PublicURL %v, want https://portal.example", u.PublicURL)
	}
	if !slices.Equal(u.TrustedPaths, []string{"/swagger-ui", "/v3/api-docs"}) {
		t.Errorf("TrustedPaths %q", u.TrustedPaths)
	}
	if !slices.Equal(u.AllowedCookies, []string{"XSRF-TOKEN", "backend_pref"}) {
		t.Errorf("AllowedCookies %q", u.AllowedCookies)
	}
}

func TestBuildGateway(t *testing.T) {
	key := session.GenerateKey()
	redis := []string{"PORTAL_SESSION_STORE", "redis", "PORTAL_REDIS_URL", "redis://127.0.0.1:1/0", "PORTAL_SESSION_KEY", key}
	tests := []struct {
		name                     string
		env                      []string
		postgres                 bool
		relay, oidc, redi, cache bool
	}{
		{"off, SQLite: cached in process", nil, false, false, false, false, true},
		{"SQLite with the cache off", []string{"PORTAL_SESSION_CACHE", "0"}, false, false, false, false, false},
		{"backend", []string{"PORTAL_ADMIN_BACKEND_URL", "http://127.0.0.1:1", "PORTAL_API_KEY", "k", "PORTAL_SESSION_KEY", key}, false, true, false, false, true},
		{"backend, oidc, redis", append([]string{"PORTAL_ADMIN_BACKEND_URL", "http://127.0.0.1:1", "PORTAL_API_KEY", "k",
			"PORTAL_OIDC_ISSUER", "http://127.0.0.1:2", "PORTAL_OIDC_CLIENT_ID", "c"}, redis...), false, true, true, true, true},
		{"oidc without backend: no member OIDC login", []string{"PORTAL_OIDC_ISSUER", "http://127.0.0.1:2", "PORTAL_OIDC_CLIENT_ID", "c", "PORTAL_SESSION_KEY", key}, false, false, false, false, true},
		{"redis with the cache off", append([]string{"PORTAL_SESSION_CACHE", "0"}, redis...), false, false, false, true, false},
		{"database store on PostgreSQL: cached", nil, true, false, false, false, true},
		{"PostgreSQL with the cache off", []string{"PORTAL_SESSION_CACHE", "0"}, true, false, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := dbtest.SQLite(t)
			if tc.postgres {
				dbtest.SkipWithoutPostgres(t)
				db = dbtest.Postgres(t)
			}
			_, g := servedGateway(t, db, nil, env(append([]string{"PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false"}, tc.env...)...))
			if (g.relay.Upstream.Backend != nil) != tc.relay || (g.relay.Backend != nil) != tc.relay || (g.relay.OIDC != nil) != tc.oidc {
				t.Fatalf("relay %v backend %v oidc %v, want relay %v oidc %v", g.relay.Upstream.Backend, g.relay.Backend, g.relay.OIDC, tc.relay, tc.oidc)
			}
			if _, isRedis := g.store.(*session.RedisStore); isRedis != tc.redi {
				t.Fatalf("store %T", g.store)
			}
			if (g.cache != nil) != tc.cache {
				t.Fatalf("session cache %v, want %v", g.cache != nil, tc.cache)
			}
		})
	}
}

// PORTAL_REDIS_URL, whatever the session store, makes failed sign-ins
// count across instances; without it each instance counts its own.
func TestBuildGatewaySignInThrottle(t *testing.T) {
	key := session.GenerateKey()
	tests := []struct {
		name   string
		env    []string
		shared bool
	}{
		{"no redis: in memory", nil, false},
		{"redis url with the database store", []string{"PORTAL_REDIS_URL", "redis://127.0.0.1:1/0"}, true},
		{"redis store", []string{"PORTAL_SESSION_STORE", "redis", "PORTAL_REDIS_URL", "redis://127.0.0.1:1/0", "PORTAL_SESSION_KEY", key}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, g := servedGateway(t, dbtest.SQLite(t), nil, env(append([]string{"PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false"}, tc.env...)...))
			if _, isRedis := g.signIn.(*throttle.Redis); isRedis != tc.shared {
				t.Fatalf("sign-in limiter %T, want shared through Redis: %v", g.signIn, tc.shared)
			}
			if _, isStore := g.store.(*session.RedisStore); isStore && cfg.SessionStore != "redis" {
				t.Fatal("PORTAL_REDIS_URL alone moved the sessions to Redis")
			}
		})
	}
}

// servedGateway loads the configuration from args and getenv as serve
// does, validates it and builds the gateway on db, closed at cleanup.
func servedGateway(t *testing.T, db *bun.DB, args []string, getenv func(string) string) (config.Config, *gatewayParts) {
	t.Helper()
	cfg, _, err := config.Load(newFlagSet("test", &strings.Builder{}), args, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidateServe(); err != nil {
		t.Fatal(err)
	}
	g, err := buildGateway(cfg, db, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return cfg, g
}
