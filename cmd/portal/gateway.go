package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/handlers"
	"portal/handlers/server"
	"portal/relay/backend"
	"portal/relay/invitelink"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/throttle"
	"portal/relay/upstream"
)

var relayPrefixPattern = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+)+$`)

// oidcOn reports whether any OIDC setting is given (then all must be).
func (c *Config) oidcOn() bool {
	return c.OIDCIssuer != "" || c.OIDCClientID != "" || c.OIDCClientSecret != ""
}

// validateGateway checks the gateway settings and returns every problem.
func (c *Config) validateGateway() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	backendGiven := c.given("PORTAL_ADMIN_BACKEND_URL")
	if backendGiven {
		problems = c.appendInvalid(problems, "PORTAL_ADMIN_BACKEND_URL")
		if c.APIKey == "" {
			add("PORTAL_API_KEY (or PORTAL_API_KEY_FILE) is required with PORTAL_ADMIN_BACKEND_URL")
		}
	}
	if !relayPrefixPattern.MatchString(c.RelayPrefix) || strings.Contains(c.RelayPrefix, "/..") || strings.Contains(c.RelayPrefix, "/./") || strings.HasSuffix(c.RelayPrefix, "/.") {
		add("PORTAL_RELAY_PREFIX must be a path like /services/admin-service")
	} else {
		for _, r := range handlers.ReservedPrefixes() { // the gateway's own routes
			if c.RelayPrefix == r || strings.HasPrefix(c.RelayPrefix, r+"/") || strings.HasPrefix(r, c.RelayPrefix+"/") {
				add("PORTAL_RELAY_PREFIX %s overlaps the gateway's own %s", c.RelayPrefix, r)
			}
		}
	}
	if !strings.HasPrefix(c.BackendLoginPath, "/") {
		add("PORTAL_BACKEND_LOGIN_PATH must start with /")
	}
	problems = c.appendInvalid(problems, "PORTAL_RELAY_CONNECT_TIMEOUT", "PORTAL_RELAY_RESPONSE_TIMEOUT", "PORTAL_RELAY_MAX_BODY")

	if c.oidcOn() {
		u, err := url.Parse(c.OIDCIssuer)
		switch {
		case c.OIDCIssuer == "" || err != nil || u.Host == "":
			add("PORTAL_OIDC_ISSUER must be the issuer's absolute address")
		case u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())):
			add("PORTAL_OIDC_ISSUER must use https (http only on a loopback address, for development)")
		}
		if c.OIDCClientID == "" {
			add("PORTAL_OIDC_CLIENT_ID is required with PORTAL_OIDC_ISSUER")
		}
		if c.OIDCRegistrationID == "" {
			add("PORTAL_OIDC_REGISTRATION_ID must not be empty")
		}
	}

	if c.RedisURL != "" { // sessions with PORTAL_SESSION_STORE=redis; sign-in limits always
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			add("PORTAL_REDIS_URL is not a redis:// address")
		}
	}
	switch c.SessionStore {
	case "db":
	case "redis":
		if c.RedisURL == "" {
			add("PORTAL_REDIS_URL is required with PORTAL_SESSION_STORE=redis")
		}
	default:
		add("PORTAL_SESSION_STORE must be db or redis")
	}
	problems = c.appendInvalid(problems, "PORTAL_SESSION_CACHE")

	needKey := backendGiven || c.oidcOn() || c.SessionStore == "redis"
	switch {
	case c.given("PORTAL_SESSION_KEY"):
		problems = c.appendInvalid(problems, "PORTAL_SESSION_KEY")
	case needKey:
		add("PORTAL_SESSION_KEY (or PORTAL_SESSION_KEY_FILE) is required with a backend, OIDC or Redis: sessions then hold tokens, kept encrypted at rest (generate one with: openssl rand -base64 32)")
	}
	return c.appendInvalid(problems, "PORTAL_TRUSTED_PROXIES", "PORTAL_RELAY_TRUSTED_PATHS", "PORTAL_RELAY_ALLOWED_COOKIES")
}

// parseBackendURL reads PORTAL_ADMIN_BACKEND_URL; empty is no backend.
func parseBackendURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("not an absolute http(s) address without user info, query or fragment")
	}
	return u, nil
}

// parseSessionKey reads PORTAL_SESSION_KEY; empty is none.
func parseSessionKey(s string) (*session.Keyring, error) {
	if s == "" {
		return nil, nil
	}
	return session.ParseKeyring(s)
}

// parseScopes reads PORTAL_OIDC_SCOPES, space or comma separated.
func parseScopes(s string) ([]string, error) {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }), nil
}

// list splits a comma-separated setting, dropping empty entries.
func list(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseRelayPaths reads PORTAL_RELAY_TRUSTED_PATHS. "/" is refused: it
// would trust everything the backend serves, which is no longer a choice
// of paths.
func parseRelayPaths(s string) ([]string, error) {
	var out []string
	for _, p := range list(s) {
		trimmed := strings.TrimRight(p, "/")
		if !relayPrefixPattern.MatchString(trimmed) || hasDotSegment(trimmed) {
			return nil, fmt.Errorf("%q is not a path below the relay prefix such as /swagger-ui", p)
		}
		out = append(out, trimmed)
	}
	return out, nil
}

func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

var cookieNamePattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// parseCookieNames reads PORTAL_RELAY_ALLOWED_COOKIES. The gateway's own
// cookies are refused: the relay never lets the backend set them, so
// listing one is a mistake better told at start-up.
func parseCookieNames(s string) ([]string, error) {
	names := list(s)
	for _, n := range names {
		switch {
		case !cookieNamePattern.MatchString(n):
			return nil, fmt.Errorf("%q is not a cookie name", n)
		case n == session.DefaultCookieName || oidc.IsAttemptCookie(n):
			return nil, fmt.Errorf("%s is the gateway's own cookie, which the backend may never set", n)
		}
	}
	return names, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// parseBytes reads "1048576", "64KiB" or "10MiB".
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, errors.New("want a positive size such as 1048576, 64KiB or 10MiB")
	}
	return n * mult, nil
}

// parseProxies reads a comma-separated list of IPs and CIDRs.
func parseProxies(s string) (upstream.TrustedProxies, error) {
	var out upstream.TrustedProxies
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// gatewayParts is the gateway half, wired from the configuration.
type gatewayParts struct {
	store    session.Store
	cache    *session.Cache // nil when off; serve runs it
	sessions *session.Manager
	relay    server.RelayDeps
	// signIn keeps the budgets of failed sign-ins: in Redis whenever
	// PORTAL_REDIS_URL is set, else nil (the handlers keep them in memory).
	signIn  throttle.Limiter
	closers []io.Closer
}

// Close releases the Redis client and the cache's subscription, if any.
func (g *gatewayParts) Close() {
	for _, c := range g.closers {
		c.Close()
	}
}

// cacheCoherence says how the session cache stays coherent, for the
// start-up log.
func cacheCoherence(bus session.Bus) string {
	switch bus.(type) {
	case *session.LocalBus:
		return "in process: serve holds the SQLite file's lock and the commands beside it write no session, so every session write is its own"
	case *session.PGBus:
		return "PostgreSQL LISTEN/NOTIFY"
	default:
		return "Redis pub/sub"
	}
}

// describeStore says which session store is used, for the start-up log.
func (c *Config) describeStore() string {
	if c.SessionStore == "redis" {
		return "redis " + mask(c.RedisURL)
	}
	return "database"
}

// buildGateway wires sessions, the relay, the backend client and OIDC from
// cfg, which validateServe has checked.
func buildGateway(cfg Config, db *bun.DB, log *slog.Logger) (*gatewayParts, error) {
	g := &gatewayParts{}
	var opts []session.StoreOption
	if cfg.SessionKey != nil {
		opts = append(opts, session.Encrypted(cfg.SessionKey))
	}
	var rdb *redis.Client
	if cfg.RedisURL != "" {
		var err error
		if rdb, err = session.NewRedisClient(cfg.RedisURL); err != nil {
			return nil, err
		}
		g.closers = append(g.closers, rdb)
		// Failed sign-ins count in Redis, so that a guesser spreading
		// attempts over the instances meets one budget, not one each.
		g.signIn = throttle.NewRedis(rdb, throttle.DefaultRedisPrefix)
		log.Info("sign-in throttle shared through redis")
	} else {
		log.Info("sign-in throttle in memory: each instance counts failed sign-ins on its own (set PORTAL_REDIS_URL to share)")
	}
	var bus session.Bus
	switch cfg.SessionStore {
	case "redis":
		g.store = session.NewRedisStore(rdb, opts...)
		bus = session.NewRedisBus(rdb, session.DefaultRedisPrefix)
	default:
		g.store = session.NewDBStore(db, opts...)
		if db.Dialect().Name() == dialect.PG {
			bus = session.NewPGBus(db, "")
		} else {
			// SQLite cannot tell other processes about a write, and needs
			// not: serve holds the file's lock (sqlitelock.go), and the
			// commands that run beside it write no session, so every
			// session write goes through this process's Manager.
			bus = session.NewLocalBus()
		}
	}
	metrics := server.NewMetrics()
	ttl := cfg.SessionCache
	if ttl > 0 {
		g.closers = append(g.closers, bus)
		g.cache = session.NewCache(bus, session.CacheConfig{TTL: ttl})
		metrics.WatchSessionCache(g.cache)
		log.Info("session cache on", "ttl", ttl, "coherence", cacheCoherence(bus))
	} else {
		bus.Close()
		log.Info("session cache off: every request reads the session store", "reason", "PORTAL_SESSION_CACHE="+ttl.String())
	}
	g.sessions = session.NewManager(g.store, session.Config{Secure: cfg.CookieSecure, SecureRequest: cfg.TrustedProxies.HTTPS, Cache: g.cache})

	g.relay = server.RelayDeps{BaseURL: cfg.BaseURL, Metrics: metrics, MetricsToken: cfg.MetricsToken}
	g.relay.Upstream.Prefix = cfg.RelayPrefix
	if cfg.AdminBackendURL == nil {
		if cfg.oidcOn() {
			log.Info("member OIDC login off: it needs PORTAL_ADMIN_BACKEND_URL to exchange the tokens; staff sign-in uses the IdP alone")
		}
		return g, nil
	}
	g.relay.Upstream = upstream.Config{Backend: cfg.AdminBackendURL, Prefix: cfg.RelayPrefix,
		ConnectTimeout: cfg.RelayConnectTimeout, ResponseHeaderTimeout: cfg.RelayResponseTimeout, MaxBodyBytes: cfg.RelayMaxBody,
		PublicURL: cfg.PublicURL, TrustedPaths: cfg.RelayTrustedPaths, AllowedCookies: cfg.RelayAllowedCookies}
	g.relay.Backend = backend.New(backend.Config{BaseURL: cfg.AdminBackendURL, APIKey: cfg.APIKey, ExternalLoginPath: cfg.BackendLoginPath})
	if !cfg.oidcOn() {
		return g, nil
	}
	// Members' OIDC login (here) exchanges the IdP's tokens at the admin
	// backend, so it needs one; staff sign-in (staff.go) needs only the IdP.
	provider := oidc.NewProvider(oidc.ProviderConfig{
		Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret,
		Scopes:      cfg.OIDCScopes,
		RedirectURL: cfg.BaseURL + server.CallbackPath,
	})
	g.relay.OIDC = oidc.NewService(oidc.Config{
		Provider: provider, Backend: g.relay.Backend, Sessions: g.sessions,
		Attempts:       oidc.NewAttemptCookies(cfg.SessionKey, server.CallbackPath, func(r *http.Request) bool { return g.sessions.SecureFor(r) }),
		RegistrationID: cfg.OIDCRegistrationID,
		OnRefresh:      metrics.ObserveRefresh, OnExchange: metrics.ObserveExchange,
	})
	log.Info("oidc login on", "issuer", cfg.OIDCIssuer, "client_id", cfg.OIDCClientID, "redirect_url", cfg.BaseURL+server.CallbackPath)
	return g, nil
}

// hashSecretSealer seals and opens the organisations' own hash secrets
// with the session key; nil without one (then no organisation may have a
// secret of its own: `portal orgs set --hash-secret` refuses, and the
// server refuses such an organisation's links).
func hashSecretSealer(cfg Config) *session.Sealer {
	if cfg.SessionKey == nil {
		return nil
	}
	return cfg.SessionKey.Sealer(server.HashSecretPurpose)
}

// invitationSigner signs and checks the portal's invitation links with
// keys derived from the session key; nil without one (then `portal invite`
// refuses and the server refuses every invitation link).
func invitationSigner(cfg Config) *invitelink.Signer {
	if cfg.SessionKey == nil {
		return nil
	}
	return invitelink.NewSigner(cfg.SessionKey.DeriveKeys(invitelink.Purpose))
}
