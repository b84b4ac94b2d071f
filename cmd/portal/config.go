package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of the portal. Each field comes from a flag or a
// PORTAL_-prefixed environment variable (the flag wins); secrets can also
// come from a file named by the variable with a _FILE suffix.
type Config struct {
	Addr         string
	DatabaseURL  string
	HashSecret   string
	BaseURL      string
	CookieSecure bool
	AutoMigrate  bool
	LogFormat    string
	LogLevel     string
	ServerTiming bool
	// PaymentProvider names the payment gateway; "test" is the built-in one.
	PaymentProvider string
	// The gateway half (gateway.go validates and wires these).
	AdminBackendURL, APIKey, RelayPrefix, BackendLoginPath  string
	RelayConnectTimeout, RelayResponseTimeout, RelayMaxBody string
	OIDCIssuer, OIDCClientID, OIDCClientSecret, OIDCScopes  string
	OIDCRegistrationID, SessionStore, RedisURL, SessionKey  string
	SessionCache, RelayTrustedPaths, RelayAllowedCookies    string
	TrustedProxies, MetricsToken                            string
	// MetricsAddr, when set, serves /metrics on a listener of its own
	// instead of the public one.
	MetricsAddr string
	// HSTSMaxAge is the Strict-Transport-Security max-age on https
	// requests ("0": no header).
	HSTSMaxAge string
	// ShutdownDelay is how long serve keeps answering, with /readyz
	// failing, before it stops accepting connections.
	ShutdownDelay string
}

// setting describes one field for flags, environment and printing.
type setting struct {
	flag, env, usage string
	secret           bool
	str              *string
	boolean          *bool
}

func (c *Config) settings() []setting {
	return []setting{
		{flag: "addr", env: "PORTAL_ADDR", usage: "listen address", str: &c.Addr},
		{flag: "database-url", env: "PORTAL_DATABASE_URL", usage: "postgres://... or sqlite:PATH", str: &c.DatabaseURL, secret: true},
		{flag: "hash-secret", env: "PORTAL_HASH_SECRET", usage: "secret of the hash links (md5(secret+userKey))", str: &c.HashSecret, secret: true},
		{flag: "base-url", env: "PORTAL_BASE_URL", usage: "public address of this portal, for links", str: &c.BaseURL},
		{flag: "cookie-secure", env: "PORTAL_COOKIE_SECURE", usage: "Secure flag on the session cookie (false only for plain-http development)", boolean: &c.CookieSecure},
		{flag: "auto-migrate", env: "PORTAL_AUTO_MIGRATE", usage: "migrate the database when serve starts", boolean: &c.AutoMigrate},
		{flag: "log-format", env: "PORTAL_LOG_FORMAT", usage: "text or json", str: &c.LogFormat},
		{flag: "log-level", env: "PORTAL_LOG_LEVEL", usage: "debug, info, warn or error", str: &c.LogLevel},
		{flag: "payment-provider", env: "PORTAL_PAYMENT_PROVIDER", usage: "payment gateway: test (the built-in test gateway; development only, needs PORTAL_COOKIE_SECURE=false)", str: &c.PaymentProvider},
		{flag: "server-timing", env: "PORTAL_SERVER_TIMING", usage: "report SQL statements per request in a Server-Timing header (benchmarks only)", boolean: &c.ServerTiming},
		{flag: "admin-backend-url", env: "PORTAL_ADMIN_BACKEND_URL", usage: "admin backend address; empty: no relay (503) and no backend login", str: &c.AdminBackendURL},
		{flag: "api-key", env: "PORTAL_API_KEY", usage: "service API key sent to the admin backend as X-API-KEY", str: &c.APIKey, secret: true},
		{flag: "relay-prefix", env: "PORTAL_RELAY_PREFIX", usage: "path prefix relayed to the admin backend", str: &c.RelayPrefix},
		{flag: "backend-login-path", env: "PORTAL_BACKEND_LOGIN_PATH", usage: "admin backend path of the hash login", str: &c.BackendLoginPath},
		{flag: "relay-connect-timeout", env: "PORTAL_RELAY_CONNECT_TIMEOUT", usage: "connect timeout to the admin backend (then 502)", str: &c.RelayConnectTimeout},
		{flag: "relay-response-timeout", env: "PORTAL_RELAY_RESPONSE_TIMEOUT", usage: "wait for the admin backend's response headers (then 504)", str: &c.RelayResponseTimeout},
		{flag: "relay-trusted-paths", env: "PORTAL_RELAY_TRUSTED_PATHS", usage: "path prefixes below the relay prefix (such as /swagger-ui) whose HTML, SVG and XML may run in the portal's origin, comma separated; elsewhere such content is sandboxed", str: &c.RelayTrustedPaths},
		{flag: "relay-allowed-cookies", env: "PORTAL_RELAY_ALLOWED_COOKIES", usage: "names of the cookies the admin backend may set through the relay, comma separated; others are dropped", str: &c.RelayAllowedCookies},
		{flag: "relay-max-body", env: "PORTAL_RELAY_MAX_BODY", usage: "largest relayed request body, bytes or with KiB/MiB (then 413)", str: &c.RelayMaxBody},
		{flag: "oidc-issuer", env: "PORTAL_OIDC_ISSUER", usage: "OIDC issuer URL; empty: OIDC login off", str: &c.OIDCIssuer},
		{flag: "oidc-client-id", env: "PORTAL_OIDC_CLIENT_ID", usage: "OIDC client id", str: &c.OIDCClientID},
		{flag: "oidc-client-secret", env: "PORTAL_OIDC_CLIENT_SECRET", usage: "OIDC client secret", str: &c.OIDCClientSecret, secret: true},
		{flag: "oidc-scopes", env: "PORTAL_OIDC_SCOPES", usage: "OIDC scopes, space or comma separated (openid is always added)", str: &c.OIDCScopes},
		{flag: "oidc-registration-id", env: "PORTAL_OIDC_REGISTRATION_ID", usage: "clientRegistrationId sent to the token exchange", str: &c.OIDCRegistrationID},
		{flag: "session-store", env: "PORTAL_SESSION_STORE", usage: "db or redis", str: &c.SessionStore},
		{flag: "session-cache", env: "PORTAL_SESSION_CACHE", usage: "longest a session is served from memory (at most 1m), kept coherent across instances over Redis pub/sub or PostgreSQL LISTEN/NOTIFY; 0: read the store on every request (SQLite: always)", str: &c.SessionCache},
		{flag: "redis-url", env: "PORTAL_REDIS_URL", usage: "redis://...: shares the limits of failed sign-ins between instances whenever set; also the session store with PORTAL_SESSION_STORE=redis", str: &c.RedisURL, secret: true},
		{flag: "session-key", env: "PORTAL_SESSION_KEY", usage: "32-byte key(s), base64 or hex, comma separated (first encrypts): session contents at rest and login cookies", str: &c.SessionKey, secret: true},
		{flag: "trusted-proxies", env: "PORTAL_TRUSTED_PROXIES", usage: "IPs or CIDRs of proxies whose X-Forwarded-* headers are believed, comma separated", str: &c.TrustedProxies},
		{flag: "metrics-token", env: "PORTAL_METRICS_TOKEN", usage: "bearer token GET /metrics requires; empty: open", str: &c.MetricsToken, secret: true},
		{flag: "metrics-addr", env: "PORTAL_METRICS_ADDR", usage: "listen address of /metrics alone (e.g. 127.0.0.1:9090); empty: /metrics on the public address", str: &c.MetricsAddr},
		{flag: "hsts-max-age", env: "PORTAL_HSTS_MAX_AGE", usage: "Strict-Transport-Security max-age on https requests (direct, or X-Forwarded-Proto from a trusted proxy), seconds or a duration such as 8760h; 0: no header", str: &c.HSTSMaxAge},
		{flag: "shutdown-delay", env: "PORTAL_SHUTDOWN_DELAY", usage: "on SIGTERM, keep serving this long with /readyz failing (so load balancers stop sending) before draining; e.g. 5s in a cluster", str: &c.ShutdownDelay},
	}
}

func defaultConfig() Config {
	return withGatewayDefaults(Config{Addr: ":8080", DatabaseURL: "sqlite:portal.db", CookieSecure: true, AutoMigrate: true, LogFormat: "text", LogLevel: "info",
		HSTSMaxAge: strconv.Itoa(int(defaultHSTSMaxAge / time.Second)), ShutdownDelay: "0s"})
}

// loadConfig reads the environment, then the flags of fs from args.
func loadConfig(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, []string, error) {
	cfg := defaultConfig()
	for _, s := range cfg.settings() {
		raw, ok, err := fromEnv(s, getenv)
		if err != nil {
			return cfg, nil, err
		}
		if ok {
			if err := s.set(raw); err != nil {
				return cfg, nil, fmt.Errorf("%s: %w", s.env, err)
			}
		}
		if s.boolean != nil {
			fs.BoolVar(s.boolean, s.flag, *s.boolean, s.usage+" ("+s.env+")")
		} else {
			fs.StringVar(s.str, s.flag, *s.str, s.usage+" ("+s.env+")")
		}
	}
	if err := fs.Parse(args); err != nil {
		return cfg, nil, err
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://localhost" + portOf(cfg.Addr)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return cfg, fs.Args(), nil
}

func fromEnv(s setting, getenv func(string) string) (string, bool, error) {
	if v := getenv(s.env); v != "" {
		return v, true, nil
	}
	if !s.secret {
		return "", false, nil
	}
	path := getenv(s.env + "_FILE")
	if path == "" {
		return "", false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("%s_FILE: %w", s.env, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

func (s setting) set(raw string) error {
	if s.boolean != nil {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", raw)
		}
		*s.boolean = b
		return nil
	}
	*s.str = raw
	return nil
}

func portOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i:]
	}
	return ""
}

// validate checks the settings every command needs; serve adds its own.
func (c *Config) validate() error {
	var problems []string
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		problems = append(problems, "PORTAL_DATABASE_URL must start with postgres:// or sqlite:")
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, "PORTAL_BASE_URL must be an absolute http(s) address")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		problems = append(problems, "PORTAL_LOG_FORMAT must be text or json")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		problems = append(problems, "PORTAL_LOG_LEVEL must be debug, info, warn or error")
	}
	if _, err := parseSeconds(c.HSTSMaxAge); err != nil {
		problems = append(problems, "PORTAL_HSTS_MAX_AGE must be 0 or a positive number of seconds or duration such as 8760h")
	}
	if d, err := time.ParseDuration(c.ShutdownDelay); err != nil || d < 0 || d > 5*time.Minute {
		problems = append(problems, "PORTAL_SHUTDOWN_DELAY must be a duration from 0s to 5m")
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			problems = append(problems, "PORTAL_METRICS_ADDR must be host:port, such as 127.0.0.1:9090")
		} else if c.MetricsAddr == c.Addr && port != "0" {
			problems = append(problems, "PORTAL_METRICS_ADDR must differ from PORTAL_ADDR")
		}
	}
	if len(problems) > 0 {
		return errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	return nil
}

// defaultHSTSMaxAge is a year: what browsers' preload lists ask for, and
// long enough that a member's browser never falls back to plain http.
const defaultHSTSMaxAge = 365 * 24 * time.Hour

// parseSeconds reads "31536000" (seconds) or a duration such as "8760h".
func parseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("want seconds or a duration")
	}
	return d, nil
}

// validateServe adds what only a running server needs.
func (c *Config) validateServe() error {
	if err := c.validate(); err != nil {
		return err
	}
	if len(c.HashSecret) < 16 {
		return errors.New("invalid configuration: PORTAL_HASH_SECRET (or PORTAL_HASH_SECRET_FILE) is required and must be at least 16 characters")
	}
	switch {
	case c.PaymentProvider == "":
		return errors.New("invalid configuration: PORTAL_PAYMENT_PROVIDER is required; the only provider so far is `test`, the built-in test gateway for development")
	case c.PaymentProvider != "test":
		return fmt.Errorf("invalid configuration: PORTAL_PAYMENT_PROVIDER %q is unknown; the only provider so far is `test`", c.PaymentProvider)
	case c.CookieSecure:
		// Anyone holding a payment reference can mark it paid at the test
		// gateway: it must never run where real members register.
		return errors.New("invalid configuration: the test payment gateway (PORTAL_PAYMENT_PROVIDER=test) is for development only and needs PORTAL_COOKIE_SECURE=false")
	}
	if problems := c.validateGateway(); len(problems) > 0 {
		return errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	return nil
}

// String prints the configuration with secrets masked.
func (c Config) String() string {
	var b strings.Builder
	for _, s := range c.settings() {
		var v string
		switch {
		case s.boolean != nil:
			v = strconv.FormatBool(*s.boolean)
		case s.secret && *s.str != "":
			v = mask(*s.str)
		default:
			v = *s.str
		}
		fmt.Fprintf(&b, "%s=%s\n", s.env, v)
	}
	return b.String()
}

// mask hides a secret; a database URL keeps its scheme and host so that it
// still tells which database is used.
func mask(secret string) string {
	if strings.HasPrefix(secret, "sqlite:") {
		return secret
	}
	if u, err := url.Parse(secret); err == nil && u.Host != "" {
		u.RawQuery = "" // may hold a password too
		return u.Redacted()
	}
	return "****"
}

func (c Config) logger(w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.LogLevel)) // validated before
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
