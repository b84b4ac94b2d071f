// Command relaybench measures what the gateway's relay costs: the same
// small request directly to a test backend, through a bare
// httputil.ReverseProxy, and through the whole gateway with a valid OIDC
// session looked up per request (database store, then Redis store; each
// read from the store on every request, then through the session cache). It
// prints requests per second and p50/p99 latency for each, and the
// gateway's ratios to the bare proxy. Run it with `make bench-relay`;
// docs/BENCHMARKS.md has figures.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine"
	"portal/handlers"
	"portal/migrations"
	"portal/relay/backend"
	"portal/relay/oidc"
	"portal/relay/session"
	"portal/relay/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "relaybench:", err)
		os.Exit(1)
	}
}

type options struct {
	duration, warmup time.Duration
	rounds           int
	concurrency      int
	databaseURL      string
	redisURL         string
	cpuProfile       string
	only             string
	backendDelay     time.Duration
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("relaybench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "measuring time per scenario and round")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds: every scenario runs once per round, in turn")
	fs.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "unmeasured load before each scenario in each round")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent clients")
	fs.StringVar(&o.databaseURL, "database-url", envOr("PORTAL_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "database of the database store (postgres://... or sqlite:PATH)")
	fs.StringVar(&o.redisURL, "redis-url", envOr("PORTAL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis of the Redis store; empty skips it")
	fs.DurationVar(&o.backendDelay, "backend-delay", 0, "time the test backend takes per request (0: answers at once, the worst case for the ratios)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured scenarios to this file")
	fs.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this text (and the bare proxy)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	be, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.backendDelay > 0 {
			time.Sleep(o.backendDelay) // a backend doing work (a database query, say)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":7,"name":"Summer regatta","date":"2026-07-04","participants":42,"authorized":`+fmt.Sprint(r.Header.Get("Authorization") != "")+`}`)
	}))
	if err != nil {
		return err
	}
	defer be.Close()
	beURL, _ := url.Parse(be.URL)

	db, cleanup, err := openDB(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer cleanup()

	fmt.Fprintf(out, "relay benchmark: %d concurrent clients, %d rounds of %s per scenario (each after %s warm-up), backend delay %s, GOMAXPROCS=%d, all in one process on 127.0.0.1\n",
		o.concurrency, o.rounds, o.duration, o.warmup, o.backendDelay, maxprocs())
	fmt.Fprintf(out, "database store: %s\n\n", redact(o.databaseURL))

	type scenario struct {
		name   string
		target string
		cookie string
	}
	var scenarios []scenario
	scenarios = append(scenarios, scenario{name: "direct to the backend", target: be.URL + "/api/events/7"})

	bare, err := serve(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(beURL); pr.SetXForwarded() },
		Transport: benchTransport(),
	})
	if err != nil {
		return err
	}
	defer bare.Close()
	scenarios = append(scenarios, scenario{name: "bare httputil.ReverseProxy", target: bare.URL + "/api/events/7"})

	kr, err := session.ParseKeyring(session.GenerateKey())
	if err != nil {
		return err
	}
	stores := []namedStore{{name: "gateway, database sessions", store: session.NewDBStore(db, session.Encrypted(kr))}}
	if db.Dialect().Name() == dialect.PG {
		stores[0].bus = session.NewPGBus(db, "") // where the sessions table's trigger announces writes
	}
	if o.redisURL != "" {
		rdb, err := session.NewRedisClient(o.redisURL)
		if err != nil {
			return err
		}
		defer rdb.Close()
		if err := rdb.Ping(ctx).Err(); err != nil {
			fmt.Fprintf(out, "Redis at %s does not answer (%v): the Redis scenario is skipped\n\n", redact(o.redisURL), err)
		} else {
			prefix := "relaybench:" + randomHex(6) + ":"
			defer func() {
				iter := rdb.Scan(context.Background(), 0, prefix+"*", 100).Iterator()
				for iter.Next(context.Background()) {
					rdb.Del(context.Background(), iter.Val())
				}
			}()
			stores = append(stores, namedStore{name: "gateway, Redis sessions", store: session.NewRedisStore(rdb, session.RedisPrefix(prefix), session.Encrypted(kr)),
				bus: session.NewRedisBus(rdb, prefix)})
		}
	}
	var gatewayRows []string
	for i, st := range stores {
		gw, cookie, err := gateway(ctx, db, st.store, nil, beURL)
		if err != nil {
			return err
		}
		defer gw.Close()
		if i == 0 {
			// Without a cookie there is no store lookup: this row shows
			// what the gateway costs besides the session lookup.
			scenarios = append(scenarios, scenario{name: guestRow, target: gw.URL + upstream.DefaultPrefix + "/api/events/7"})
			gatewayRows = append(gatewayRows, guestRow)
		}
		name := st.name + ", store read per request"
		scenarios = append(scenarios, scenario{name: name, target: gw.URL + upstream.DefaultPrefix + "/api/events/7", cookie: cookie})
		gatewayRows = append(gatewayRows, name)
		if st.bus == nil {
			continue
		}
		// The deployed configuration: the session cache, kept coherent
		// over the store's own bus, running as in portal serve.
		cache := session.NewCache(st.bus, session.CacheConfig{})
		cacheCtx, stopCache := context.WithCancel(ctx)
		go cache.Run(cacheCtx)
		defer func() { stopCache(); st.bus.Close() }()
		if err := waitOnline(ctx, cache); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		gw, cookie, err = gateway(ctx, db, st.store, cache, beURL)
		if err != nil {
			return err
		}
		defer gw.Close()
		name = st.name + ", cached (default)"
		scenarios = append(scenarios, scenario{name: name, target: gw.URL + upstream.DefaultPrefix + "/api/events/7", cookie: cookie})
		gatewayRows = append(gatewayRows, name)
	}

	// The scenarios take turns, round after round, so that a slow patch
	// of the shared machine spreads over all of them instead of skewing one.
	samples := map[string]*sample{}
	for r := range o.rounds {
		fmt.Fprintf(out, "round %d of %d...\n", r+1, o.rounds)
		for _, sc := range scenarios {
			if err := ctx.Err(); err != nil {
				return err
			}
			if o.only != "" && !strings.Contains(sc.name, o.only) && sc.name != "bare httputil.ReverseProxy" {
				continue
			}
			got, err := load(ctx, sc.target, sc.cookie, o)
			if err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
			if samples[sc.name] == nil {
				samples[sc.name] = &sample{}
			}
			samples[sc.name].add(got)
		}
	}
	results := map[string]result{}
	fmt.Fprintf(out, "\n%-54s %12s %10s %10s %8s\n", "scenario", "requests/s", "p50", "p99", "errors")
	for _, sc := range scenarios {
		smp, ok := samples[sc.name]
		if !ok {
			continue
		}
		res, err := smp.result()
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		results[sc.name] = res
		fmt.Fprintf(out, "%-54s %12.0f %10s %10s %8d\n", sc.name, res.rps, round(res.p50), round(res.p99), res.errors)
	}
	baseline := results["bare httputil.ReverseProxy"]
	fmt.Fprintf(out, "\nagainst the bare reverse proxy (targets: at least 80%% of its throughput, under 2ms added p99):\n")
	for _, name := range gatewayRows {
		r, ok := results[name]
		if !ok {
			continue
		}
		fmt.Fprintf(out, "%-54s throughput %5.1f%%   added p50 %8s   added p99 %8s\n", name, 100*r.rps/baseline.rps, round(r.p50-baseline.p50), round(r.p99-baseline.p99))
	}
	return nil
}

const guestRow = "gateway, guest (no lookup)"

// namedStore is a session store under test and the bus its cache uses
// (nil: no cache possible, as on SQLite).
type namedStore struct {
	name  string
	store session.Store
	bus   session.Bus
}

// waitOnline waits for the cache's subscription to be proven.
func waitOnline(ctx context.Context, c *session.Cache) error {
	deadline := time.Now().Add(10 * time.Second)
	for !c.Online() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("the session cache did not come online")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// gateway starts the whole gateway on store (with cache, if not nil) and
// returns it with the cookie of a valid OIDC session (a JWT valid for an
// hour, so no refresh happens).
func gateway(ctx context.Context, db *bun.DB, store session.Store, cache *session.Cache, beURL *url.URL) (*httptest.Server, string, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil)) // the request log is formatted, as in production, then dropped
	sessions := session.NewManager(store, session.Config{Secure: false, Cache: cache})
	rec := httptest.NewRecorder()
	values := map[string]string{
		session.AttrBackendJWT:       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl",
		session.AttrBackendJWTExpiry: time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano),
		oidc.AttrRefreshToken:        "refresh", oidc.AttrIDToken: "id", oidc.AttrSubject: "bench",
	}
	if _, err := sessions.Start(ctx, rec, httptest.NewRequest(http.MethodGet, "/", nil), "", values); err != nil {
		return nil, "", err
	}
	cookie := rec.Result().Cookies()[0].Value
	e := handlers.New(handlers.Deps{
		Engine:   engine.NewService(db, engine.NewTestGateway("bench-secret-0123456789", handlers.TestGatewayURLs("http://127.0.0.1")), engine.WithLogger(log)),
		Sessions: sessions, HashSecret: "bench-secret-0123456789", Logger: log,
		Relay: handlers.RelayDeps{
			Upstream: upstream.Config{Backend: beURL, Transport: benchTransport(), Log: log},
			Backend:  backend.New(backend.Config{BaseURL: beURL, APIKey: "bench"}),
		},
	})
	srv, err := serve(e)
	return srv, cookie, err
}

// benchTransport is the relay's transport settings, for the bare proxy too.
func benchTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
}

func serve(h http.Handler) (*httptest.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	srv.Start()
	return srv, nil
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int
}

// sample is what the rounds of one scenario measured.
type sample struct {
	latencies []time.Duration
	errors    int
	measured  time.Duration
}

func (s *sample) add(o sample) {
	s.latencies = append(s.latencies, o.latencies...)
	s.errors += o.errors
	s.measured += o.measured
}

// result summarises the sample: requests per second over all rounds, and
// the percentiles of every request measured.
func (s *sample) result() (result, error) {
	all := s.latencies
	if len(all) == 0 {
		return result{}, errors.New("no successful requests")
	}
	if s.errors > len(all)/100 {
		return result{}, fmt.Errorf("%d of %d requests failed", s.errors, s.errors+len(all))
	}
	slices.Sort(all)
	return result{
		rps: float64(len(all)) / s.measured.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100], errors: s.errors,
	}, nil
}

// load runs o.concurrency clients against target, each on its own
// keep-alive connection, and measures every request after the warm-up.
func load(ctx context.Context, target, cookie string, o options) (sample, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: o.concurrency, MaxIdleConns: o.concurrency, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	measureFrom := time.Now().Add(o.warmup)
	until := measureFrom.Add(o.duration)
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1<<14)
			bad := 0
			req, _ := http.NewRequest(http.MethodGet, target, nil)
			req.Header.Set("Accept", "application/json")
			if cookie != "" {
				req.AddCookie(&http.Cookie{Name: session.DefaultCookieName, Value: cookie})
			}
			for ctx.Err() == nil {
				start := time.Now()
				if start.After(until) {
					break
				}
				res, err := client.Do(req)
				ok := err == nil && res.StatusCode == http.StatusOK
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if start.Before(measureFrom) {
					continue
				}
				if !ok {
					bad++
					continue
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(all) == 0 {
		return sample{}, errors.New("no successful requests")
	}
	return sample{latencies: all, errors: errs, measured: o.duration}, nil
}

// openDB opens the database of the database store on a schema (PostgreSQL)
// or file (SQLite) of its own, migrated, and removes it afterwards.
func openDB(ctx context.Context, dbURL string) (*bun.DB, func(), error) {
	cleanup := func() {}
	if strings.HasPrefix(dbURL, "postgres://") || strings.HasPrefix(dbURL, "postgresql://") {
		schema := "relaybench_" + randomHex(6)
		admin, err := engine.OpenDB(dbURL)
		if err != nil {
			return nil, nil, err
		}
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			admin.Close()
			return nil, nil, fmt.Errorf("create schema (is PostgreSQL at %s running?): %w", redact(dbURL), err)
		}
		cleanup = func() {
			admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		}
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		dbURL += sep + "search_path=" + schema
	}
	db, err := engine.OpenDB(dbURL)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if _, err := migrations.Up(ctx, db); err != nil {
		db.Close()
		cleanup()
		return nil, nil, err
	}
	return db, func() { db.Close(); cleanup() }, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func redact(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		p.RawQuery = ""
		return p.Redacted()
	}
	return u
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func round(d time.Duration) string {
	if d < 0 {
		return "-" + round(-d)
	}
	return d.Round(time.Microsecond).String()
}

func maxprocs() int { return runtime.GOMAXPROCS(0) }
