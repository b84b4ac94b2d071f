// Command relaybench measures what the gateway's relay costs, as users run
// it: the load generator, a test backend, a bare pooled
// httputil.ReverseProxy and each portal (`bin/portal serve`) are separate
// processes. It sends the same small request directly to the backend,
// through the bare proxy, and through the portal as a guest and with a
// session made by the real hash login (POST /api/auth/external-login, the
// backend answering a JWT valid for an hour) on the default SQLite
// configuration, on PostgreSQL and on Redis, the session cache on as by
// default. It prints requests per second and p50/p99 latency for each, and
// the portal's ratios to the bare proxy of the same run. Run it with
// `make bench-relay`; docs/BENCHMARKS.md has figures.
//
// relaybench re-executes itself with the hidden flag -serve (backend or
// bare) for the backend and the bare proxy.
package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"portal/engine"
	"portal/relay/hashlink"
	"portal/relay/session"
	"portal/relay/upstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	portal           string
	databaseURL      string
	redisURL         string
	cpuProfile       string
	only             string
	backendDelay     time.Duration
	// The hidden child roles.
	serveRole, backendURL string
}

const (
	bareRow  = "bare httputil.ReverseProxy"
	guestRow = "portal, guest (no lookup)"
	// benchSecret is the hash-link secret of the portals; benchUser the
	// user key of the hash login.
	benchSecret = "bench-secret-0123456789"
	benchUser   = "bench"
	benchAPIKey = "bench-api-key"
)

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("relaybench", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "measuring time per scenario and round")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds: every scenario runs once per round, in turn")
	fs.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "unmeasured load before each scenario in each round")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent clients")
	fs.StringVar(&o.portal, "portal", "bin/portal", "the portal binary (make bench-relay builds it)")
	fs.StringVar(&o.databaseURL, "database-url", envOr("PORTAL_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL of the PostgreSQL scenario (a schema of its own, dropped afterwards); empty skips it")
	fs.StringVar(&o.redisURL, "redis-url", envOr("PORTAL_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"), "Redis of the Redis scenario; empty skips it")
	fs.DurationVar(&o.backendDelay, "backend-delay", 0, "time the test backend takes per request (0: answers at once, the worst case for the ratios)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "each portal process writes a CPU profile of its run to this file plus .sqlite, .postgres or .redis (use -only to profile one scenario)")
	fs.StringVar(&o.only, "only", "", "run only the scenarios whose name contains this text (and the bare proxy)")
	fs.StringVar(&o.serveRole, "serve", "", "internal: serve as the backend or the bare proxy")
	fs.StringVar(&o.backendURL, "backend", "", "internal: the backend of the bare proxy")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.serveRole != "" {
		return serveRole(ctx, o)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "relaybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var procs []*child
	defer func() {
		for _, p := range slices.Backward(procs) {
			p.stop()
		}
	}()
	start := func(name string, env []string, cmd string, args ...string) (*child, error) {
		p, err := startChild(ctx, name, env, filepath.Join(tmp, name+".log"), cmd, args...)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}

	be, err := start("backend", nil, self, "-serve", "backend", "-backend-delay", o.backendDelay.String())
	if err != nil {
		return err
	}
	bare, err := start("bare", nil, self, "-serve", "bare", "-backend", be.url)
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "relay benchmark: %d concurrent clients, %d rounds of %s per scenario (each after %s warm-up), backend delay %s, GOMAXPROCS=%d, %d CPUs\n",
		o.concurrency, o.rounds, o.duration, o.warmup, o.backendDelay, maxprocs(), runtime.NumCPU())
	fmt.Fprintf(out, "processes: load generator, backend, bare proxy and each portal (%s serve) on 127.0.0.1; the portals log at info to a file\n", o.portal)

	type scenario struct{ name, target, cookie string }
	scenarios := []scenario{
		{name: "direct to the backend", target: be.url + "/api/events/7"},
		{name: bareRow, target: bare.url + "/api/events/7"},
	}
	var portalRows []string
	key := session.GenerateKey()
	base := []string{"PORTAL_ADDR=127.0.0.1:0", "PORTAL_HASH_SECRET=" + benchSecret, "PORTAL_PAYMENT_PROVIDER=test", "PORTAL_COOKIE_SECURE=false",
		"PORTAL_ADMIN_BACKEND_URL=" + be.url, "PORTAL_API_KEY=" + benchAPIKey, "PORTAL_SESSION_KEY=" + key}
	type portalConf struct {
		name, row string
		env       []string
	}
	confs := []portalConf{{name: "sqlite", row: "portal, SQLite (default), hash session, cached",
		env: []string{"PORTAL_DATABASE_URL=sqlite:" + filepath.Join(tmp, "portal.db")}}}
	if o.databaseURL != "" {
		pgURL, drop, err := pgSchema(ctx, o.databaseURL)
		if err != nil {
			return err
		}
		defer drop()
		confs = append(confs, portalConf{name: "postgres", row: "portal, PostgreSQL, hash session, cached", env: []string{"PORTAL_DATABASE_URL=" + pgURL}})
	}
	if o.redisURL != "" {
		if err := pingRedis(ctx, o.redisURL); err != nil {
			fmt.Fprintf(out, "Redis at %s does not answer (%v): the Redis scenario is skipped\n", redact(o.redisURL), err)
		} else {
			confs = append(confs, portalConf{name: "redis", row: "portal, Redis sessions, hash session, cached",
				env: []string{"PORTAL_DATABASE_URL=sqlite:" + filepath.Join(tmp, "portal-redis.db"), "PORTAL_SESSION_STORE=redis", "PORTAL_REDIS_URL=" + o.redisURL}})
		}
	}
	for i, pc := range confs {
		env := append(slices.Clone(base), pc.env...)
		if o.cpuProfile != "" {
			prof, err := filepath.Abs(o.cpuProfile + "." + pc.name)
			if err != nil {
				return err
			}
			env = append(env, "PORTAL_CPU_PROFILE="+prof)
		}
		p, err := start("portal-"+pc.name, env, o.portal, "serve")
		if err != nil {
			return err
		}
		cookie, err := hashLogin(ctx, p.url)
		if err != nil {
			return fmt.Errorf("%s: %w (log: %s)", pc.name, err, p.logPath)
		}
		target := p.url + upstream.DefaultPrefix + "/api/events/7"
		if i == 0 {
			// Without a cookie there is no session lookup: this row shows
			// what the portal costs besides it.
			scenarios = append(scenarios, scenario{name: guestRow, target: target})
			portalRows = append(portalRows, guestRow)
		}
		scenarios = append(scenarios, scenario{name: pc.row, target: target, cookie: cookie})
		portalRows = append(portalRows, pc.row)
	}
	fmt.Fprintln(out)

	// The scenarios take turns, round after round, so that a slow patch
	// of the shared machine spreads over all of them instead of skewing one.
	samples := map[string]*sample{}
	for r := range o.rounds {
		fmt.Fprintf(out, "round %d of %d...\n", r+1, o.rounds)
		for _, sc := range scenarios {
			if err := ctx.Err(); err != nil {
				return err
			}
			if o.only != "" && !strings.Contains(sc.name, o.only) && sc.name != bareRow {
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
	fmt.Fprintf(out, "\n%-50s %12s %10s %10s %8s\n", "scenario", "requests/s", "p50", "p99", "errors")
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
		fmt.Fprintf(out, "%-50s %12.0f %10s %10s %8d\n", sc.name, res.rps, round(res.p50), round(res.p99), res.errors)
	}
	baseline := results[bareRow]
	fmt.Fprintf(out, "\nagainst the bare reverse proxy (targets: at least 80%% of its throughput, under 2ms added p99):\n")
	for _, name := range portalRows {
		r, ok := results[name]
		if !ok {
			continue
		}
		fmt.Fprintf(out, "%-50s throughput %5.1f%%   added p50 %8s   added p99 %8s\n", name, 100*r.rps/baseline.rps, round(r.p50-baseline.p50), round(r.p99-baseline.p99))
	}
	return nil
}

// child is a process of the benchmark serving HTTP on url.
type child struct {
	name, url, logPath string
	cmd                *exec.Cmd
	done               chan error
}

var listeningRE = regexp.MustCompile(`listening on (\S+)`)

// startChild starts cmd with env added to this process's environment
// (PORTAL_ variables removed, so that only env configures a portal), its
// stderr to logPath, and waits for "listening on ADDR" on its stdout.
func startChild(ctx context.Context, name string, env []string, logPath, cmd string, args ...string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := exec.Command(cmd, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PORTAL_") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, env...)
	c.Stderr = logf
	stdout, err := c.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := c.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &child{name: name, logPath: logPath, cmd: c, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.done <- c.Wait(); logf.Close() }()
	select {
	case a := <-addr:
		p.url = "http://" + a
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("%s exited before listening (%v); its log: %s", name, err, logPath)
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s did not listen within 30s; its log: %s", name, logPath)
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// stop interrupts the process (a portal then shuts down gracefully and
// writes its CPU profile) and waits for it, killing it after 20 s.
func (p *child) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// serveRole runs this process as the test backend or the bare proxy until
// interrupted.
func serveRole(ctx context.Context, o options) error {
	var h http.Handler
	switch o.serveRole {
	case "backend":
		h = backendHandler(o.backendDelay)
	case "bare":
		u, err := url.Parse(o.backendURL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("-backend %q: want the backend's URL", o.backendURL)
		}
		h = &httputil.ReverseProxy{
			Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.SetXForwarded() },
			Transport: benchTransport(),
		}
	default:
		return fmt.Errorf("-serve %q: want backend or bare", o.serveRole)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("%s listening on %s\n", o.serveRole, ln.Addr())
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// backendHandler is the test admin backend: the hash login answers a JWT
// valid for an hour (so no refresh happens), everything else a small JSON
// answer.
func backendHandler(delay time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /auth/external-login", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ UserKey, Hash string }
		if r.Header.Get("X-API-KEY") != benchAPIKey || json.NewDecoder(r.Body).Decode(&req) != nil || req.UserKey == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"token": mintJWT("user:"+req.UserKey, time.Hour)})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			time.Sleep(delay) // a backend doing work (a database query, say)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":7,"name":"Summer regatta","date":"2026-07-04","participants":42,"authorized":`+fmt.Sprint(r.Header.Get("Authorization") != "")+`}`)
	})
	return mux
}

// mintJWT returns an HS256 JWT for sub expiring after ttl; the portal reads
// its exp without verifying it, as it does the real backend's.
func mintJWT(sub string, ttl time.Duration) string {
	enc := base64.RawURLEncoding
	payload, _ := json.Marshal(map[string]any{"sub": sub, "iat": time.Now().Unix(), "exp": time.Now().Add(ttl).Unix()})
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte("relaybench-backend-key"))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// hashLogin makes a session on the portal at base by the real hash login
// and returns its cookie.
func hashLogin(ctx context.Context, base string) (string, error) {
	body := fmt.Sprintf(`{"userKey":%q,"hash":%q}`, benchUser, hashlink.Sign(benchSecret, benchUser))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/auth/external-login", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("hash login: %s %s", res.Status, msg)
	}
	for _, c := range res.Cookies() {
		if c.Name == session.DefaultCookieName && c.Value != "" {
			return c.Value, nil
		}
	}
	return "", errors.New("hash login: no session cookie")
}

// pgSchema creates a schema of its own on the PostgreSQL at dbURL and
// returns the URL that uses it, and its removal.
func pgSchema(ctx context.Context, dbURL string) (string, func(), error) {
	schema := "relaybench_" + randomHex(6)
	admin, err := engine.OpenDB(dbURL)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema (is PostgreSQL at %s running?): %w", redact(dbURL), err)
	}
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	return dbURL + sep + "search_path=" + schema, func() {
		admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	}, nil
}

// pingRedis checks that Redis at redisURL answers.
func pingRedis(ctx context.Context, redisURL string) error {
	rdb, err := session.NewRedisClient(redisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	return rdb.Ping(ctx).Err()
}

// benchTransport is the relay's transport settings, for the bare proxy.
func benchTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
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
