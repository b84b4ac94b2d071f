package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"time"

	"portal/cmd/portal/config"
	"portal/engine"
	"portal/engine/clock"
	"portal/engine/stripepay"
	"portal/handlers"
	"portal/handlers/server"
	"portal/migrations"
	"portal/relay/session"
)

// cmdServe runs the server until ctx ends, then shuts down gracefully.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, rest, err := config.Load(newFlagSet("serve", stderr), args, getenv)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", rest)
	}
	if err := cfg.ValidateServe(); err != nil {
		return err
	}
	log := cfg.Logger(stderr)
	if cfg.CPUProfile != "" {
		stop, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("PORTAL_CPU_PROFILE: %w", err)
		}
		defer stop()
		log.Warn("writing a CPU profile of this run", "file", cfg.CPUProfile)
	}
	unlock, err := lockSQLite(cfg.DatabaseURL) // held for serve's life: one process per SQLite file
	if err != nil {
		return err
	}
	defer unlock()
	db, err := engine.OpenDB(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	engine.SetMaxConns(db, cfg.DatabaseMaxConns)
	db = db.WithQueryHook(engine.QueryHook{Log: log}) // statements at debug level
	if cfg.AutoMigrate {
		applied, err := migrations.Up(ctx, db)
		if err != nil {
			return err
		}
		for _, name := range applied {
			log.Info("applied migration", "name", name)
		}
	} else if err := migrations.CheckCurrent(ctx, db); err != nil {
		return err
	}
	provider, testGateway, err := paymentProvider(cfg)
	if err != nil {
		return err
	}
	gw, err := buildGateway(cfg, db, log) // gateway.go: session store, relay, backend, OIDC
	if err != nil {
		return err
	}
	defer gw.Close()
	write, grace := serveTimeouts(cfg)
	stopping := make(chan struct{})
	gw.relay.MetricsElsewhere = cfg.MetricsAddr != ""
	store, sessions := gw.store, gw.sessions
	var svc *engine.Service
	svc = engine.NewService(db, provider, append([]engine.ServiceOption{engine.WithLogger(log), engine.WithPaymentLinks(server.PaymentLinks(cfg.BaseURL)),
		engine.WithPublicURL(cfg.BaseURL)}, append(webhookOptions(cfg), orgPaymentOptions(cfg, testGateway, log, &svc)...)...)...)
	staff, stopStaffIdP, err := staffSignIn(cfg, gw.store, gw.cache, svc, log) // staff.go
	if err != nil {
		return err
	}
	defer stopStaffIdP()
	e := handlers.New(handlers.Deps{
		Staff:          staff,
		Engine:         svc,
		Sessions:       sessions,
		Gateway:        testGateway,
		StripeWebhook:  provider.Name() == stripepay.Name,
		HashSecret:     cfg.HashSecret,
		Logger:         log,
		ServerTiming:   cfg.ServerTiming,
		TrustedProxies: cfg.TrustedProxies,
		Relay:          gw.relay,
		HSTSMaxAge:     cfg.HSTSMaxAge,
		Stopping:       stopping,
		SignInLimiter:  gw.signIn,
		HashSecrets:    hashSecretSealer(cfg),
		PublicHost:     publicHost(cfg.BaseURL),
		Invitations:    invitationSigner(cfg),
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := newHTTPServer(e, write)
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("PORTAL_METRICS_ADDR: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET "+server.MetricsPath, gw.relay.Metrics.Handler(cfg.MetricsToken))
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(mln) }()
		log.Info("metrics listening", "addr", mln.Addr().String())
	}
	if cfg.DebugAddr != "" {
		dsrv, dln, err := listenDebug(cfg.DebugAddr)
		if err != nil {
			ln.Close()
			return err
		}
		servers = append(servers, dsrv)
		go func() { errc <- dsrv.Serve(dln) }()
		log.Warn("pprof listening (PORTAL_DEBUG_ADDR): profiling only", "addr", dln.Addr().String())
	}
	go sweepSessions(ctx, store, log)
	mailer, err := buildMailer(cfg, log)
	if err != nil {
		return err
	}
	log.Info("e-mail goes to "+mailer.Describe(), "job_workers", cfg.JobWorkers)
	runner := buildRunner(cfg, db, svc, log, gw.relay.Metrics, mailer)
	jobsCtx, stopJobs := context.WithCancel(ctx)
	jobsDone := make(chan struct{})
	go func() { runner.Run(jobsCtx); close(jobsDone) }()
	// Jobs in hand finish before the database closes; one that outlasts
	// the grace period is claimed again by any instance once its lease
	// expires, so waiting longer gains nothing.
	defer func() {
		stopJobs()
		select {
		case <-jobsDone:
		case <-time.After(grace):
			log.Warn("jobs still running at shutdown; another instance takes them over when their lease expires")
		}
	}()
	if gw.cache != nil {
		go gw.cache.Run(ctx)
	}
	backendAddr := ""
	if cfg.AdminBackendURL != nil {
		backendAddr = cfg.AdminBackendURL.String()
	}
	if clock.Shifted() {
		log.Warn("the clock is shifted by "+clock.Env+": due dates, reminders and retention follow it", "now", clock.Now().Format(time.RFC3339))
	}
	log.Info("portal listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "database", config.Mask(cfg.DatabaseURL), "cookie_secure", cfg.CookieSecure,
		"sessions", cfg.DescribeStore(), "admin_backend", backendAddr, "oidc", cfg.OIDCOn())
	fmt.Fprintf(stdout, "portal listening on %s\n", ln.Addr())
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// /readyz fails from now on; during the delay load balancers notice
	// and stop sending, while requests still in flight or already on
	// their way are served.
	close(stopping)
	log.Info("shutting down", "delay", cfg.ShutdownDelay, "grace", grace)
	select {
	case <-time.After(cfg.ShutdownDelay):
	case err := <-errc:
		return err
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdownCtx); err != nil {
			return err
		}
	}
	for range servers {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// relayMargin is what a relayed request needs beyond waiting for the
// backend: reading the request, the session lookup, streaming the answer.
const relayMargin = 30 * time.Second

// serveTimeouts derives from the relay's timeouts the server's write
// timeout, which must not cut a relayed answer the relay still waits for,
// and the grace period of a shutdown, which must let such a request
// finish.
func serveTimeouts(cfg config.Config) (write, grace time.Duration) {
	relay := cfg.RelayConnectTimeout + cfg.RelayResponseTimeout + relayMargin
	return max(60*time.Second, relay), max(15*time.Second, relay)
}

// newHTTPServer is the portal's server for h, with the write timeout
// serveTimeouts derives. It speaks HTTP/1.1 and HTTP/2 without TLS (h2c,
// prior knowledge only), so that a TLS-ending proxy in front may use
// either; TLS itself is the proxy's job.
func newHTTPServer(h http.Handler, writeTimeout time.Duration) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
	}
}

// sweepSessions deletes expired sessions every few minutes.
func sweepSessions(ctx context.Context, store session.Store, log interface {
	Warn(msg string, args ...any)
}) {
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if _, err := store.DeleteExpired(ctx, now); err != nil {
				log.Warn("sweeping expired sessions failed", "err", err)
			}
		}
	}
}

// publicHost is the host of PORTAL_BASE_URL (handlers normalises it).
func publicHost(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return u.Host
}
