// Package config is every setting of the portal: one table of settings
// (flag, PORTAL_ variable, _FILE for secrets, default), each parsed once
// into a typed field of Config as it is read, validated together with
// every problem named, and printed with its secrets masked. The commands
// of cmd/portal load it; gateway.go holds the gateway half (relay, OIDC,
// sessions, proxies).
package config

import (
	"crypto"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/clock"
	"portal/engine/payment"
	"portal/engine/registration"
	"portal/handlers/server"
	"portal/outbound/mail"
	"portal/relay/backend"
	"portal/relay/session"
	"portal/relay/upstream"
)

// Config is every setting of the portal. Each field comes from a flag or a
// PORTAL_-prefixed environment variable (the flag wins); secrets can also
// come from a file named by the variable with a _FILE suffix. A setting's
// text is parsed into its typed field as it is read; text that does not
// parse is kept as a problem that validation reports with the others, so
// that nothing after validation parses a setting again.
type Config struct {
	Addr        string
	DatabaseURL string
	HashSecret  string
	// BaseURL is the portal's public address without a trailing slash;
	// PublicURL is the same address parsed (nil while it does not parse).
	BaseURL      string
	PublicURL    *url.URL
	CookieSecure bool
	AutoMigrate  bool
	LogFormat    string
	LogLevel     slog.Level
	ServerTiming bool
	// PaymentProvider names the payment gateway: "stripe" (Stripe
	// Checkout) or "test", the built-in one for development.
	PaymentProvider string
	// BankCreditor is the environment's account for payment by bank
	// transfer, the default of every organisation: name, IBAN, optional
	// BIC and structured address, validated together. Its IBAN is empty
	// when no bank details are configured.
	BankCreditor banking.Creditor
	// StripeSecretKey and StripeWebhookSecret are the Stripe account's API
	// key and the webhook endpoint's signing secret; StripeAPIURL is the
	// API's address (stripe-mock in tests).
	StripeSecretKey, StripeWebhookSecret string
	StripeAPIURL                         *url.URL

	// The gateway half (gateway.go validates and wires these).

	// AdminBackendURL is the admin backend's address; nil: no relay.
	AdminBackendURL                            *url.URL
	APIKey, RelayPrefix, BackendLoginPath      string
	RelayConnectTimeout, RelayResponseTimeout  time.Duration
	RelayMaxBody                               int64
	RelayTrustedPaths, RelayAllowedCookies     []string
	OIDCIssuer, OIDCClientID, OIDCClientSecret string
	OIDCScopes                                 []string
	OIDCRegistrationID, SessionStore, RedisURL string
	// StaffRoleClaim and StaffRoleMap grant staff roles from an ID token
	// claim, without a staff record; StaffIdleTimeout and StaffMaxLifetime
	// bound the staff sessions.
	StaffRoleClaim                     string
	StaffRoleMap                       []server.StaffRoleGrant
	StaffIdleTimeout, StaffMaxLifetime time.Duration
	// SessionKey encrypts sessions at rest and login cookies; nil: none given.
	SessionKey     *session.Keyring
	SessionCache   time.Duration
	TrustedProxies upstream.TrustedProxies
	MetricsToken   string
	// MetricsAddr, when set, serves /metrics on a listener of its own
	// instead of the public one.
	MetricsAddr string
	// DebugAddr, when set, serves net/http/pprof on a loopback listener
	// of its own (profiling under load); empty, the default: off.
	DebugAddr string
	// HSTSMaxAge is the Strict-Transport-Security max-age on https
	// requests (0: no header).
	HSTSMaxAge time.Duration
	// ShutdownDelay is how long serve keeps answering, with /readyz
	// failing, before it stops accepting connections.
	ShutdownDelay time.Duration
	// CPUProfile, when set, is the file serve writes a CPU profile of its
	// whole run to (for measurements such as make bench-relay); off by default.
	CPUProfile string

	// DatabaseMaxConns is the PostgreSQL pool's size per instance (SQLite
	// always has one connection).
	DatabaseMaxConns int

	// JobWorkers is how many jobs (e-mail, schedules) this instance runs
	// at once; every instance runs workers.
	JobWorkers int
	// SMTPURL is the mail server (nil: mail is not sent, and logged with its
	// text on a loopback base URL only);
	// MailFrom the sender, whose name the club's name replaces per message.
	SMTPURL  *url.URL
	MailFrom netmail.Address
	// DKIM signing, when DKIMKey is set.
	DKIMDomain, DKIMSelector string
	DKIMKey                  crypto.Signer
	// ArchiveMode is what the daily archive does with the answers of
	// registrations finished 90 days ago.
	ArchiveMode registration.ArchiveMode
	// WebhookRetentionDays is how long delivered webhook events are kept.
	WebhookRetentionDays int
	// WebhookAllowNetworks are internal networks webhook endpoints may be
	// on (PORTAL_WEBHOOK_ALLOW_NETWORKS); empty: none.
	WebhookAllowNetworks engine.WebhookNetworks

	// text is each setting's text as given (or its default), by variable:
	// what String prints and what tells a setting given from one not.
	text map[string]string
	// invalid holds, by variable, the problem of each setting whose text
	// did not parse; validation reports them in its order.
	invalid map[string]error
}

// setting describes one field for flags, environment and printing.
type setting struct {
	flag, env, usage string
	secret           bool
	// def is the default as it would be written.
	def string
	// boolean is the field of a boolean setting, which is a boolean flag.
	boolean *bool
	// parse stores raw's typed value in the field; its error is the
	// problem validation reports.
	parse func(raw string) error
}

// text stores a string setting as it is.
func text(dst *string) func(string) error {
	return func(raw string) error { *dst = raw; return nil }
}

// typed stores the value conv reads from raw; on an error it stores the zero
// value and returns problem, or the error itself when problem is empty.
func typed[T any](dst *T, conv func(string) (T, error), problem string) func(string) error {
	return func(raw string) error {
		v, err := conv(raw)
		if err != nil {
			var zero T
			*dst = zero
			if problem != "" {
				return errors.New(problem)
			}
			return err
		}
		*dst = v
		return nil
	}
}

func (c *Config) settings() []setting {
	return []setting{
		{flag: "addr", env: "PORTAL_ADDR", usage: "listen address", def: ":8080", parse: text(&c.Addr)},
		{flag: "database-url", env: "PORTAL_DATABASE_URL", usage: "postgres://... or sqlite:PATH", def: "sqlite:portal.db", parse: text(&c.DatabaseURL), secret: true},
		{flag: "database-max-conns", env: "PORTAL_DATABASE_MAX_CONNS", usage: "PostgreSQL connections this instance opens at most (SQLite uses one)", def: "16",
			parse: typed(&c.DatabaseMaxConns, intBetween(1, 500), "PORTAL_DATABASE_MAX_CONNS must be a whole number from 1 to 500")},
		{flag: "hash-secret", env: "PORTAL_HASH_SECRET", usage: "secret of the hash links (md5(secret+userKey))", parse: text(&c.HashSecret), secret: true},
		{flag: "base-url", env: "PORTAL_BASE_URL", usage: "public address of this portal, for links", parse: text(&c.BaseURL)},
		{flag: "cookie-secure", env: "PORTAL_COOKIE_SECURE", usage: "Secure flag on the session cookie (false only for plain-http development)", def: "true", boolean: &c.CookieSecure, parse: typed(&c.CookieSecure, parseBool, "")},
		{flag: "auto-migrate", env: "PORTAL_AUTO_MIGRATE", usage: "migrate the database when serve starts", def: "true", boolean: &c.AutoMigrate, parse: typed(&c.AutoMigrate, parseBool, "")},
		{flag: "log-format", env: "PORTAL_LOG_FORMAT", usage: "text or json", def: "text", parse: text(&c.LogFormat)},
		{flag: "log-level", env: "PORTAL_LOG_LEVEL", usage: "debug, info, warn or error", def: "info",
			parse: typed(&c.LogLevel, parseLevel, "PORTAL_LOG_LEVEL must be debug, info, warn or error")},
		{flag: "bank-creditor-name", env: "PORTAL_BANK_CREDITOR_NAME", usage: "account holder of the bank account members transfer to (at most 70 characters)", parse: text(&c.BankCreditor.Name)},
		{flag: "bank-iban", env: "PORTAL_BANK_IBAN", usage: "IBAN of that account, spaces allowed; empty: no bank details",
			parse: typed(&c.BankCreditor.IBAN, prefixed("PORTAL_BANK_IBAN", parseOptionalIBAN), "")},
		{flag: "bank-bic", env: "PORTAL_BANK_BIC", usage: "BIC of that account (optional: SEPA transfers need only the IBAN)",
			parse: typed(&c.BankCreditor.BIC, prefixed("PORTAL_BANK_BIC", parseOptionalBIC), "")},
		{flag: "bank-creditor-address", env: "PORTAL_BANK_CREDITOR_ADDRESS", usage: "account holder's address as street;number;postcode;town;country (e.g. Bahnhofstrasse;1;8001;Zürich;CH); required for CH and LI accounts (QR-bill)",
			parse: typed(&c.BankCreditor.Address, prefixed("PORTAL_BANK_CREDITOR_ADDRESS", parseOptionalAddress), "")},
		{flag: "payment-provider", env: "PORTAL_PAYMENT_PROVIDER", usage: "payment gateway: stripe (Stripe Checkout), bank_transfer (the PORTAL_BANK_ account, QR code and RF reference), or test (the built-in test gateway; development only, on an http loopback PORTAL_BASE_URL)", parse: text(&c.PaymentProvider)},
		{flag: "stripe-secret-key", env: "PORTAL_STRIPE_SECRET_KEY", usage: "Stripe secret API key (sk_live_..., sk_test_... or a restricted rk_...), with PORTAL_PAYMENT_PROVIDER=stripe", parse: text(&c.StripeSecretKey), secret: true},
		{flag: "stripe-webhook-secret", env: "PORTAL_STRIPE_WEBHOOK_SECRET", usage: "signing secret (whsec_...) of the Stripe webhook endpoint {PORTAL_BASE_URL}/webhooks/stripe", parse: text(&c.StripeWebhookSecret), secret: true},
		{flag: "stripe-api-url", env: "PORTAL_STRIPE_API_URL", usage: "Stripe API address (tests: a stripe-mock)", def: "https://api.stripe.com",
			parse: typed(&c.StripeAPIURL, parseBackendURL, "PORTAL_STRIPE_API_URL must be an absolute http(s) address without user info, query or fragment")},
		{flag: "server-timing", env: "PORTAL_SERVER_TIMING", usage: "report SQL statements per request in a Server-Timing header (benchmarks only)", def: "false", boolean: &c.ServerTiming, parse: typed(&c.ServerTiming, parseBool, "")},
		{flag: "admin-backend-url", env: "PORTAL_ADMIN_BACKEND_URL", usage: "admin backend address; empty: no relay (503) and no backend login",
			parse: typed(&c.AdminBackendURL, parseBackendURL, "PORTAL_ADMIN_BACKEND_URL must be an absolute http(s) address without user info, query or fragment")},
		{flag: "api-key", env: "PORTAL_API_KEY", usage: "service API key sent to the admin backend as X-API-KEY", parse: text(&c.APIKey), secret: true},
		{flag: "relay-prefix", env: "PORTAL_RELAY_PREFIX", usage: "path prefix relayed to the admin backend", def: upstream.DefaultPrefix, parse: text(&c.RelayPrefix)},
		{flag: "backend-login-path", env: "PORTAL_BACKEND_LOGIN_PATH", usage: "admin backend path of the hash login", def: backend.DefaultExternalLoginPath, parse: text(&c.BackendLoginPath)},
		{flag: "relay-connect-timeout", env: "PORTAL_RELAY_CONNECT_TIMEOUT", usage: "connect timeout to the admin backend (then 502)", def: upstream.DefaultConnectTimeout.String(),
			parse: typed(&c.RelayConnectTimeout, parsePositiveDuration, "PORTAL_RELAY_CONNECT_TIMEOUT must be a positive duration such as 5s")},
		{flag: "relay-response-timeout", env: "PORTAL_RELAY_RESPONSE_TIMEOUT", usage: "wait for the admin backend's response headers (then 504)", def: upstream.DefaultResponseHeaderTimeout.String(),
			parse: typed(&c.RelayResponseTimeout, parsePositiveDuration, "PORTAL_RELAY_RESPONSE_TIMEOUT must be a positive duration such as 5s")},
		{flag: "relay-trusted-paths", env: "PORTAL_RELAY_TRUSTED_PATHS", usage: "path prefixes below the relay prefix (such as /swagger-ui) whose HTML, SVG and XML may run in the portal's origin, comma separated; elsewhere such content is sandboxed",
			parse: typed(&c.RelayTrustedPaths, prefixed("PORTAL_RELAY_TRUSTED_PATHS", parseRelayPaths), "")},
		{flag: "relay-allowed-cookies", env: "PORTAL_RELAY_ALLOWED_COOKIES", usage: "names of the cookies the admin backend may set through the relay, comma separated; others are dropped",
			parse: typed(&c.RelayAllowedCookies, prefixed("PORTAL_RELAY_ALLOWED_COOKIES", parseCookieNames), "")},
		{flag: "relay-max-body", env: "PORTAL_RELAY_MAX_BODY", usage: "largest relayed request body, bytes or with KiB/MiB (then 413)", def: "10MiB",
			parse: typed(&c.RelayMaxBody, prefixed("PORTAL_RELAY_MAX_BODY", parseBytes), "")},
		{flag: "oidc-issuer", env: "PORTAL_OIDC_ISSUER", usage: "OIDC issuer URL; empty: OIDC login off", parse: text(&c.OIDCIssuer)},
		{flag: "oidc-client-id", env: "PORTAL_OIDC_CLIENT_ID", usage: "OIDC client id", parse: text(&c.OIDCClientID)},
		{flag: "oidc-client-secret", env: "PORTAL_OIDC_CLIENT_SECRET", usage: "OIDC client secret", parse: text(&c.OIDCClientSecret), secret: true},
		{flag: "oidc-scopes", env: "PORTAL_OIDC_SCOPES", usage: "OIDC scopes, space or comma separated (openid is always added)", def: "openid profile email",
			parse: typed(&c.OIDCScopes, parseScopes, "")},
		{flag: "oidc-registration-id", env: "PORTAL_OIDC_REGISTRATION_ID", usage: "clientRegistrationId sent to the token exchange", def: "oidc", parse: text(&c.OIDCRegistrationID)},
		{flag: "staff-role-claim", env: "PORTAL_STAFF_ROLE_CLAIM", usage: "ID token claim (string or list, e.g. groups) whose values PORTAL_STAFF_ROLE_MAP maps to staff roles without a staff record; empty: none", parse: text(&c.StaffRoleClaim)},
		{flag: "staff-role-map", env: "PORTAL_STAFF_ROLE_MAP", usage: "claim value to staff role, comma separated: club-admins=admin,north:treasurers=treasurer (slug: limits to one organisation)",
			parse: typed(&c.StaffRoleMap, prefixed("PORTAL_STAFF_ROLE_MAP", server.ParseStaffRoleMap), "")},
		{flag: "staff-idle-timeout", env: "PORTAL_STAFF_IDLE_TIMEOUT", usage: "a staff session ends after this long unused (at most 2h)", def: "30m",
			parse: typed(&c.StaffIdleTimeout, durationUpTo(2*time.Hour), "PORTAL_STAFF_IDLE_TIMEOUT must be a duration up to 2h, such as 30m")},
		{flag: "staff-max-lifetime", env: "PORTAL_STAFF_MAX_LIFETIME", usage: "a staff session ends this long after sign-in, however busy (at most 24h)", def: "8h",
			parse: typed(&c.StaffMaxLifetime, durationUpTo(24*time.Hour), "PORTAL_STAFF_MAX_LIFETIME must be a duration up to 24h, such as 8h")},
		{flag: "session-store", env: "PORTAL_SESSION_STORE", usage: "db or redis", def: "db", parse: text(&c.SessionStore)},
		// The cap bounds how long a lost invalidation could keep a
		// logged-out session alive on another instance.
		{flag: "session-cache", env: "PORTAL_SESSION_CACHE", usage: "longest a session is served from memory (at most 1m), kept coherent across instances over Redis pub/sub or PostgreSQL LISTEN/NOTIFY; 0: read the store on every request (SQLite: always)", def: session.DefaultCacheTTL.String(),
			parse: typed(&c.SessionCache, durationUpTo(time.Minute), "PORTAL_SESSION_CACHE must be a duration from 0 (cache off) to 1m, such as 5s")},
		{flag: "redis-url", env: "PORTAL_REDIS_URL", usage: "redis://...: shares the limits of failed sign-ins between instances whenever set; also the session store with PORTAL_SESSION_STORE=redis", parse: text(&c.RedisURL), secret: true},
		{flag: "session-key", env: "PORTAL_SESSION_KEY", usage: "32-byte key(s), base64 or hex, comma separated (first encrypts): session contents at rest and login cookies",
			parse: typed(&c.SessionKey, prefixed("PORTAL_SESSION_KEY", parseSessionKey), ""), secret: true},
		{flag: "trusted-proxies", env: "PORTAL_TRUSTED_PROXIES", usage: "IPs or CIDRs of proxies whose X-Forwarded-* headers are believed, comma separated",
			parse: typed(&c.TrustedProxies, prefixed("PORTAL_TRUSTED_PROXIES", parseProxies), "")},
		{flag: "metrics-token", env: "PORTAL_METRICS_TOKEN", usage: "bearer token GET /metrics requires; empty: open", parse: text(&c.MetricsToken), secret: true},
		{flag: "cpu-profile", env: "PORTAL_CPU_PROFILE", usage: "serve writes a CPU profile (pprof) of its whole run to this file, for measurements; empty: off", parse: text(&c.CPUProfile)},
		{flag: "metrics-addr", env: "PORTAL_METRICS_ADDR", usage: "listen address of /metrics alone (e.g. 127.0.0.1:9090); empty: /metrics on the public address", parse: text(&c.MetricsAddr)},
		{flag: "debug-addr", env: "PORTAL_DEBUG_ADDR", usage: "loopback listen address of net/http/pprof (e.g. 127.0.0.1:6060), for profiling; empty: off", parse: text(&c.DebugAddr)},
		{flag: "hsts-max-age", env: "PORTAL_HSTS_MAX_AGE", usage: "Strict-Transport-Security max-age on https requests (direct, or X-Forwarded-Proto from a trusted proxy), seconds or a duration such as 8760h; 0: no header", def: strconv.Itoa(int(defaultHSTSMaxAge / time.Second)),
			parse: typed(&c.HSTSMaxAge, parseSeconds, "PORTAL_HSTS_MAX_AGE must be 0 or a positive number of seconds or duration such as 8760h")},
		{flag: "shutdown-delay", env: "PORTAL_SHUTDOWN_DELAY", usage: "on SIGTERM, keep serving this long with /readyz failing (so load balancers stop sending) before draining; e.g. 5s in a cluster", def: "0s",
			parse: typed(&c.ShutdownDelay, durationUpTo(5*time.Minute), "PORTAL_SHUTDOWN_DELAY must be a duration from 0s to 5m")},
		{flag: "job-workers", env: "PORTAL_JOB_WORKERS", usage: "jobs (e-mail, scheduled work) this instance runs at once; every instance runs workers, no leader", def: "2",
			parse: typed(&c.JobWorkers, intBetween(1, 64), "PORTAL_JOB_WORKERS must be a whole number from 1 to 64")},
		{flag: "smtp-url", env: "PORTAL_SMTP_URL", usage: "mail server: smtp://[user:password@]host[:587] (STARTTLS when offered, required with credentials) or smtps://...[:465] (implicit TLS); empty: e-mail is not sent (its text is logged on a loopback PORTAL_BASE_URL only)", secret: true,
			parse: typed(&c.SMTPURL, optional(prefixed("PORTAL_SMTP_URL", mail.ParseURL)), "")},
		{flag: "mail-from", env: "PORTAL_MAIL_FROM", usage: `sender of e-mail, "Name <address>"; each message shows the club's name with this address (required with PORTAL_SMTP_URL)`,
			parse: typed(&c.MailFrom, optional(prefixed("PORTAL_MAIL_FROM", mail.ParseFrom)), "")},
		{flag: "archive-mode", env: "PORTAL_ARCHIVE_MODE", usage: "what the daily archive does with the answers of registrations finished 90 days ago: archive (moved to process_archives as JSON) or remove (deleted; order, memberships and a summary stay)", def: "archive",
			parse: typed(&c.ArchiveMode, parseArchiveMode, "PORTAL_ARCHIVE_MODE must be archive or remove")},
		{flag: "webhook-retention-days", env: "PORTAL_WEBHOOK_RETENTION_DAYS", usage: "days a delivered webhook event and its delivery log are kept before the daily prune deletes them (undelivered and dead ones stay)", def: "30",
			parse: typed(&c.WebhookRetentionDays, intBetween(1, 3650), "PORTAL_WEBHOOK_RETENTION_DAYS must be a whole number of days from 1 to 3650")},
		{flag: "webhook-allow-networks", env: "PORTAL_WEBHOOK_ALLOW_NETWORKS", usage: "CIDRs, comma separated, of internal networks webhook endpoints may be on (e.g. a receiver on the portal's own private network); empty: loopback, private and link-local addresses are refused unless PORTAL_BASE_URL is loopback",
			parse: typed(&c.WebhookAllowNetworks, prefixed("PORTAL_WEBHOOK_ALLOW_NETWORKS", engine.ParseWebhookNetworks), "")},
		{flag: "dkim-domain", env: "PORTAL_DKIM_DOMAIN", usage: "DKIM signing domain (d=); default: the domain of PORTAL_MAIL_FROM", parse: text(&c.DKIMDomain)},
		{flag: "dkim-selector", env: "PORTAL_DKIM_SELECTOR", usage: "DKIM selector (s=): the public key is published at SELECTOR._domainkey.DOMAIN", parse: text(&c.DKIMSelector)},
		{flag: "dkim-key", env: "PORTAL_DKIM_KEY", usage: "DKIM private key, PEM (RSA or Ed25519; PORTAL_DKIM_KEY_FILE to read it from a file); empty: mail is not signed", secret: true,
			parse: typed(&c.DKIMKey, optional(func(raw string) (crypto.Signer, error) {
				k, err := mail.ParseDKIMKey([]byte(raw))
				if err != nil {
					return nil, errors.New("PORTAL_DKIM_KEY must be a PEM private key (RSA PKCS#1 or PKCS#8, or Ed25519)")
				}
				return k, nil
			}), "")},
	}
}

// Default is the configuration with every setting at its default.
func Default() Config {
	c := Config{text: map[string]string{}, invalid: map[string]error{}}
	for _, s := range c.settings() {
		c.set(s, s.def)
		if err := c.invalid[s.env]; err != nil {
			panic(fmt.Sprintf("the default of %s: %v", s.env, err)) // a defect of the table above
		}
	}
	return c
}

// set reads raw into s's field; text that does not parse is kept as a
// problem for validation.
func (c *Config) set(s setting, raw string) {
	c.text[s.env] = raw
	if err := s.parse(raw); err != nil {
		c.invalid[s.env] = err
	} else {
		delete(c.invalid, s.env)
	}
}

func parseArchiveMode(raw string) (registration.ArchiveMode, error) {
	switch m := registration.ArchiveMode(strings.TrimSpace(raw)); m {
	case registration.ArchiveKeep, registration.ArchiveRemove:
		return m, nil
	}
	return "", errors.New("unknown archive mode")
}

// optional parses raw with conv unless it is empty (the zero value).
func optional[T any](conv func(string) (T, error)) func(string) (T, error) {
	return func(raw string) (T, error) {
		if strings.TrimSpace(raw) == "" {
			var zero T
			return zero, nil
		}
		return conv(raw)
	}
}

// intBetween reads a whole number from lo to hi.
func intBetween(lo, hi int) func(string) (int, error) {
	return func(raw string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return n, nil
	}
}

// parseBool reads a boolean setting.
func parseBool(raw string) (bool, error) {
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fmt.Errorf("want true or false, got %q", raw)
	}
	return b, nil
}

// given reports whether the setting named by env is not empty (a value
// that does not parse is given too).
func (c *Config) given(env string) bool { return c.text[env] != "" }

// finishBaseURL derives the public address from the listen address when
// none is given, and parses it.
func (c *Config) finishBaseURL() {
	if c.BaseURL == "" {
		c.BaseURL = "http://localhost" + portOf(c.Addr)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.text["PORTAL_BASE_URL"] = c.BaseURL
	c.PublicURL = nil
	if u, err := url.Parse(c.BaseURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		c.PublicURL = u
	}
}

// Load reads the environment, then the flags of fs from args.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string) (Config, []string, error) {
	cfg := Default()
	settings := cfg.settings()
	flagText := make([]string, len(settings))
	for i, s := range settings {
		raw, ok, err := fromEnv(s, getenv)
		if err != nil {
			return cfg, nil, err
		}
		if ok {
			cfg.set(s, raw)
			// A boolean that does not parse is an error at once, as the
			// flag package makes it of a flag.
			if err := cfg.invalid[s.env]; s.boolean != nil && err != nil {
				return cfg, nil, fmt.Errorf("%s: %w", s.env, err)
			}
		}
		if s.boolean != nil {
			fs.BoolVar(s.boolean, s.flag, *s.boolean, s.usage+" ("+s.env+")")
		} else {
			fs.StringVar(&flagText[i], s.flag, cfg.text[s.env], s.usage+" ("+s.env+")")
		}
	}
	if err := fs.Parse(args); err != nil {
		return cfg, nil, err
	}
	// String flags (rather than a flag.Value per type, which -h would
	// show as "value") hold the text; the flags given are parsed now.
	byFlag := map[string]int{}
	for i, s := range settings {
		byFlag[s.flag] = i
	}
	fs.Visit(func(f *flag.Flag) {
		i, ok := byFlag[f.Name]
		if !ok {
			return // a command's own flag
		}
		if s := settings[i]; s.boolean != nil {
			cfg.text[s.env] = strconv.FormatBool(*s.boolean) // the flag package parsed it
		} else {
			cfg.set(s, flagText[i])
		}
	})
	cfg.finishBaseURL()
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

func portOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i:]
	}
	return ""
}

// Validate checks the settings every command needs; serve adds its own.
func (c *Config) Validate() error {
	var problems []string
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		problems = append(problems, "PORTAL_DATABASE_URL must start with postgres:// or sqlite:")
	}
	if c.PublicURL == nil {
		problems = append(problems, "PORTAL_BASE_URL must be an absolute http(s) address")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		problems = append(problems, "PORTAL_LOG_FORMAT must be text or json")
	}
	problems = c.appendInvalid(problems, "PORTAL_LOG_LEVEL", "PORTAL_HSTS_MAX_AGE", "PORTAL_SHUTDOWN_DELAY", "PORTAL_JOB_WORKERS", "PORTAL_DATABASE_MAX_CONNS",
		"PORTAL_SMTP_URL", "PORTAL_MAIL_FROM", "PORTAL_DKIM_KEY", "PORTAL_ARCHIVE_MODE")
	problems = append(problems, c.mailProblems()...)
	problems = c.appendBankProblems(problems)
	if err := clock.Err(); err != nil {
		// A shifted clock itself is allowed anywhere the process runs (the
		// calendar tests run whole commands under it, public addresses
		// included); serve says so loudly at start.
		problems = append(problems, err.Error())
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			problems = append(problems, "PORTAL_METRICS_ADDR must be host:port, such as 127.0.0.1:9090")
		} else if c.MetricsAddr == c.Addr && port != "0" {
			problems = append(problems, "PORTAL_METRICS_ADDR must differ from PORTAL_ADDR")
		}
	}
	if c.DebugAddr != "" && !loopbackAddr(c.DebugAddr) {
		problems = append(problems, "PORTAL_DEBUG_ADDR must be a loopback host:port, such as 127.0.0.1:6060: the profiler must not be reachable from outside")
	}
	if len(problems) > 0 {
		return errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	return nil
}

// bankSettings are the settings of BankCreditor, by the field names of
// banking's errors.
var bankSettings = map[string]string{
	"creditor name":    "PORTAL_BANK_CREDITOR_NAME",
	"IBAN":             "PORTAL_BANK_IBAN",
	"BIC":              "PORTAL_BANK_BIC",
	"creditor address": "PORTAL_BANK_CREDITOR_ADDRESS",
}

// appendBankProblems checks the bank details as a whole: none, or at least
// a name and an IBAN that banking accepts for the QR codes it will print
// (so that a Swiss account without an address fails at start-up, not on a
// member's done page).
func (c *Config) appendBankProblems(problems []string) []string {
	envs := []string{"PORTAL_BANK_CREDITOR_NAME", "PORTAL_BANK_IBAN", "PORTAL_BANK_BIC", "PORTAL_BANK_CREDITOR_ADDRESS"}
	given := false
	for _, env := range envs {
		given = given || c.given(env)
	}
	if !given {
		return problems
	}
	if invalid := c.appendInvalid(nil, envs...); len(invalid) > 0 {
		return append(problems, invalid...)
	}
	if !c.given("PORTAL_BANK_IBAN") {
		return append(problems, "PORTAL_BANK_IBAN is required with the other PORTAL_BANK_ settings")
	}
	err := c.BankCreditor.Validate()
	var fe *banking.FieldError
	for _, e := range flattenErrors(err) {
		if errors.As(e, &fe) {
			name := fe.Field
			for field, env := range bankSettings {
				if strings.HasPrefix(fe.Field, field) {
					name = env + strings.TrimPrefix(fe.Field, field)
				}
			}
			problems = append(problems, name+" "+fe.Problem)
		} else {
			problems = append(problems, e.Error())
		}
	}
	return problems
}

// mailProblems checks that the mail settings go together.
func (c *Config) mailProblems() []string {
	var problems []string
	if c.SMTPURL != nil && c.MailFrom.Address == "" && c.invalid["PORTAL_MAIL_FROM"] == nil {
		problems = append(problems, `PORTAL_MAIL_FROM ("Name <address>") is required with PORTAL_SMTP_URL`)
	}
	if c.DKIMKey != nil && c.DKIMSelector == "" {
		problems = append(problems, "PORTAL_DKIM_SELECTOR is required with PORTAL_DKIM_KEY")
	}
	if c.DKIMKey != nil && c.DKIMDomain == "" && c.MailFrom.Address == "" {
		problems = append(problems, "PORTAL_DKIM_DOMAIN (or PORTAL_MAIL_FROM) is required with PORTAL_DKIM_KEY")
	}
	if c.DKIMKey == nil && (c.DKIMSelector != "" || c.DKIMDomain != "") && c.invalid["PORTAL_DKIM_KEY"] == nil {
		problems = append(problems, "PORTAL_DKIM_SELECTOR and PORTAL_DKIM_DOMAIN need PORTAL_DKIM_KEY (or PORTAL_DKIM_KEY_FILE)")
	}
	return problems
}

// flattenErrors lists the errors errors.Join joined, at any depth.
func flattenErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// parseOptionalIBAN reads an IBAN; empty is none.
func parseOptionalIBAN(s string) (banking.IBAN, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	return banking.ParseIBAN(s)
}

// parseOptionalBIC reads a BIC; empty is none.
func parseOptionalBIC(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	return banking.ParseBIC(s)
}

// parseOptionalAddress reads street;number;postcode;town;country; empty is none.
func parseOptionalAddress(s string) (*banking.Address, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	a, err := banking.ParseAddress(s)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// appendInvalid adds the problems of those of the named settings whose
// text did not parse.
func (c *Config) appendInvalid(problems []string, envs ...string) []string {
	for _, env := range envs {
		if err := c.invalid[env]; err != nil {
			problems = append(problems, err.Error())
		}
	}
	return problems
}

// prefixed names the setting in conv's errors.
func prefixed[T any](env string, conv func(string) (T, error)) func(string) (T, error) {
	return func(raw string) (T, error) {
		v, err := conv(raw)
		if err != nil {
			return v, fmt.Errorf("%s: %w", env, err)
		}
		return v, nil
	}
}

func parseLevel(s string) (slog.Level, error) {
	var lvl slog.Level
	err := lvl.UnmarshalText([]byte(s))
	return lvl, err
}

func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = errors.New("not positive")
	}
	return d, err
}

// durationUpTo reads a duration from 0 to most.
func durationUpTo(most time.Duration) func(string) (time.Duration, error) {
	return func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err == nil && (d < 0 || d > most) {
			err = errors.New("out of range")
		}
		return d, err
	}
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

// ValidateServe adds what only a running server needs.
func (c *Config) ValidateServe() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if len(c.HashSecret) < 16 {
		return errors.New("invalid configuration: PORTAL_HASH_SECRET (or PORTAL_HASH_SECRET_FILE) is required and must be at least 16 characters")
	}
	if err := c.ValidatePayments(); err != nil {
		return err
	}
	if problems := c.validateGateway(); len(problems) > 0 {
		return errors.New("invalid configuration: " + strings.Join(problems, "; "))
	}
	return nil
}

// ValidatePayments checks the payment provider's settings.
func (c *Config) ValidatePayments() error {
	switch c.PaymentProvider {
	case "":
		return errors.New("invalid configuration: PORTAL_PAYMENT_PROVIDER is required: `stripe` (Stripe Checkout), `bank_transfer` (the PORTAL_BANK_ account), or `test`, the built-in test gateway for development")
	case payment.TestGatewayProvider:
		// Whoever reaches the test gateway's page marks their own order
		// paid: it must never run where real members register. Only a
		// plain-http address on this machine is safe, whatever the cookie
		// setting says.
		if c.PublicURL == nil || c.PublicURL.Scheme != "http" || !loopbackHost(c.PublicURL.Hostname()) {
			return errors.New("invalid configuration: the test payment gateway (PORTAL_PAYMENT_PROVIDER=test) is for development only: PORTAL_BASE_URL must be an http address on a loopback host (localhost, 127.0.0.1, [::1])")
		}
	case payment.StripeProvider:
		var problems []string
		if !strings.HasPrefix(c.StripeSecretKey, "sk_") && !strings.HasPrefix(c.StripeSecretKey, "rk_") {
			problems = append(problems, "PORTAL_STRIPE_SECRET_KEY (or PORTAL_STRIPE_SECRET_KEY_FILE) is required with PORTAL_PAYMENT_PROVIDER=stripe and starts with sk_ or rk_")
		}
		if !strings.HasPrefix(c.StripeWebhookSecret, "whsec_") {
			problems = append(problems, "PORTAL_STRIPE_WEBHOOK_SECRET (or PORTAL_STRIPE_WEBHOOK_SECRET_FILE) is required with PORTAL_PAYMENT_PROVIDER=stripe and starts with whsec_")
		}
		problems = c.appendInvalid(problems, "PORTAL_STRIPE_API_URL")
		if len(problems) > 0 {
			return errors.New("invalid configuration: " + strings.Join(problems, "; "))
		}
	case payment.BankTransferProvider:
		// The bank details themselves are checked by validate
		// (appendBankProblems); here only that there are some.
		if c.BankCreditor.IBAN == "" {
			return errors.New("invalid configuration: PORTAL_PAYMENT_PROVIDER=bank_transfer needs the account members transfer to: PORTAL_BANK_CREDITOR_NAME and PORTAL_BANK_IBAN (and PORTAL_BANK_CREDITOR_ADDRESS for a CH or LI account)")
		}
	default:
		return fmt.Errorf("invalid configuration: PORTAL_PAYMENT_PROVIDER %q is unknown; use `stripe`, `bank_transfer` or `test`", c.PaymentProvider)
	}
	return nil
}

// loopbackHost says whether host names this machine only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackAddr reports whether addr is host:port with a loopback host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return loopbackHost(host)
}

// String prints the configuration with secrets masked.
func (c Config) String() string {
	var b strings.Builder
	for _, s := range c.settings() {
		var v string
		switch {
		case s.boolean != nil:
			v = strconv.FormatBool(*s.boolean)
		case s.secret && c.text[s.env] != "":
			v = Mask(c.text[s.env])
		default:
			v = c.text[s.env]
		}
		fmt.Fprintf(&b, "%s=%s\n", s.env, v)
	}
	return b.String()
}

// Mask hides a secret; a database URL keeps its scheme and host so that it
// still tells which database is used.
func Mask(secret string) string {
	if strings.HasPrefix(secret, "sqlite:") {
		return secret
	}
	if u, err := url.Parse(secret); err == nil && u.Host != "" {
		u.RawQuery = "" // may hold a password too
		return u.Redacted()
	}
	return "****"
}

func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// TestPaymentsAllowed says whether the test gateway may run: only on a
// plain-http loopback PORTAL_BASE_URL (ValidatePayments says why).
func (c *Config) TestPaymentsAllowed() bool {
	return c.PublicURL != nil && c.PublicURL.Scheme == "http" && loopbackHost(c.PublicURL.Hostname())
}
