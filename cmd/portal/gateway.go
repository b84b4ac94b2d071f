package main

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/cmd/portal/config"
	"portal/handlers/server"
	"portal/relay/backend"
	"portal/relay/invitelink"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/throttle"
	"portal/relay/upstream"
)

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

// buildGateway wires sessions, the relay, the backend client and OIDC from
// cfg, which ValidateServe has checked.
func buildGateway(cfg config.Config, db *bun.DB, log *slog.Logger) (*gatewayParts, error) {
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
		if cfg.OIDCOn() {
			log.Info("member OIDC login off: it needs PORTAL_ADMIN_BACKEND_URL to exchange the tokens; staff sign-in uses the IdP alone")
		}
		return g, nil
	}
	g.relay.Upstream = upstream.Config{Backend: cfg.AdminBackendURL, Prefix: cfg.RelayPrefix,
		ConnectTimeout: cfg.RelayConnectTimeout, ResponseHeaderTimeout: cfg.RelayResponseTimeout, MaxBodyBytes: cfg.RelayMaxBody,
		PublicURL: cfg.PublicURL, TrustedPaths: cfg.RelayTrustedPaths, AllowedCookies: cfg.RelayAllowedCookies}
	g.relay.Backend = backend.New(backend.Config{BaseURL: cfg.AdminBackendURL, APIKey: cfg.APIKey, ExternalLoginPath: cfg.BackendLoginPath})
	if !cfg.OIDCOn() {
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
func hashSecretSealer(cfg config.Config) *session.Sealer {
	if cfg.SessionKey == nil {
		return nil
	}
	return cfg.SessionKey.Sealer(server.HashSecretPurpose)
}

// invitationSigner signs and checks the portal's invitation links with
// keys derived from the session key; nil without one (then `portal invite`
// refuses and the server refuses every invitation link).
func invitationSigner(cfg config.Config) *invitelink.Signer {
	if cfg.SessionKey == nil {
		return nil
	}
	return invitelink.NewSigner(cfg.SessionKey.DeriveKeys(invitelink.Purpose))
}
