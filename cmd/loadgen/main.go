// Command loadgen is the benchmark behind `make bench`: it starts `portal
// serve` as its own process on a fresh PostgreSQL schema (or, with -sqlite,
// a fresh SQLite file) with demo members and runs, in turn:
//
//  1. one flow alone, to warm up and find the step that commits;
//  2. the step loop: N signed-in members answering question steps (POST
//     /api/forms/next) in a closed loop, starting over with a reset before
//     the committing step: next/s, p50 and p99, statements per next and the
//     CPU time the portal and PostgreSQL spent per next;
//  3. page loads: N members loading their step page in a closed loop;
//  4. flows: N concurrent members through the whole JSON flow (sign-in,
//     load, selection, every question, commit, payment at the test gateway,
//     return): flows/s, next/s over the phase, where the time went and the
//     server's peak RSS;
//  5. with the server stopped, the reference on the same database: the raw
//     step transaction (lock the instance, insert three answers, bump the
//     version) with the same concurrency, through pgbench on PostgreSQL or
//     database/sql with the portal's driver on SQLite.
//
// The step loop's next/s against the reference's transactions/s is the
// ratio the benchmark is about (issue 11's target: at least 0.5).
package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"portal/engine"
	"portal/handlers/members/formclient"
)

const secret = "bench-hash-secret-0123456789"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type options struct {
	binary      string
	databaseURL string
	members     int
	flows       int
	think       time.Duration
	sqlite      bool
	steps       time.Duration
	pages       time.Duration
	reference   time.Duration
	pgbench     string
}

func run() error {
	var o options
	flag.StringVar(&o.binary, "portal", "bin/portal", "the portal binary to start")
	flag.StringVar(&o.databaseURL, "database-url", envOr("PORTAL_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "PostgreSQL to run on (a fresh schema is created and dropped)")
	flag.IntVar(&o.members, "members", 32, "concurrent members")
	flag.IntVar(&o.flows, "flows", 10, "flows per member")
	flag.DurationVar(&o.think, "think", 0, "mean pause between a member's answers, spread over 0.5x to 1.5x (0: closed loop, as fast as the server answers)")
	flag.BoolVar(&o.sqlite, "sqlite", os.Getenv("BENCH_DB") == "sqlite", "run on a fresh SQLite file instead of PostgreSQL (also BENCH_DB=sqlite)")
	flag.DurationVar(&o.steps, "steps", 10*time.Second, "how long signed-in members answer question steps in a closed loop after the flows (0: skip)")
	flag.DurationVar(&o.pages, "pages", 5*time.Second, "how long signed-in members load their step page after the flows (0: skip)")
	flag.DurationVar(&o.reference, "reference", 10*time.Second, "how long the raw step transaction runs as the reference (0: skip)")
	flag.StringVar(&o.pgbench, "pgbench", "pgbench", "the pgbench binary (PostgreSQL reference)")
	var f fedOptions
	federation := flag.Bool("federation", false, "run the federation benchmark instead (make bench-federation, federation.go): a fresh database seeded with portal seed federation, then each workload of issue 42")
	flag.IntVar(&f.clubs, "clubs", 200, "federation: clubs to seed")
	flag.IntVar(&f.persons, "persons", 100000, "federation: persons to seed")
	flag.IntVar(&f.opening, "opening", 0, "federation: households of the season opening (0: all the seed made, persons/10)")
	flag.IntVar(&f.concurrency, "opening-concurrency", 64, "federation: households registering at once")
	flag.IntVar(&f.paced, "opening-paced", 2000, "federation: how many of the opening's households arrive at the season's pace (all of them over -opening-window) before the rest register as fast as answered (0: none)")
	flag.DurationVar(&f.openingWindow, "opening-window", 10*time.Minute, "federation: the season opening's window: the households' arrivals are spread over it (0: no paced part)")
	flag.DurationVar(&f.openingThink, "opening-think", 400*time.Millisecond, "federation: a paced household's mean pause before each answer, spread over 0.5x to 1.5x")
	flag.DurationVar(&f.nightThink, "night-think", 400*time.Millisecond, "federation: the nightly jobs' step loop: each member's mean pause before an answer, spread over 0.5x to 1.5x (0: a closed loop, as fast as answered, which saturates two cores)")
	flag.IntVar(&f.staff, "staff", 16, "federation: staff loading pages at once")
	flag.IntVar(&f.staffRounds, "staff-rounds", 3, "federation: rounds of every staff page per staff member")
	flag.DurationVar(&f.staffThink, "staff-think", 3*time.Second, "federation: each staff member's mean pause between pages, spread over 0.5x to 1.5x: staff read the page they loaded (0: none, the pages one after the other as fast as answered, which saturates two cores)")
	flag.StringVar(&f.doc, "doc", "", "federation: write the figures into this file's bench-federation section (docs/BENCHMARKS.md)")
	flag.StringVar(&f.existing, "existing", "", "federation: run on this database, seeded before with portal seed federation, instead of a fresh one (kept; profiling one phase)")
	flag.StringVar(&f.only, "only", "", "federation: run only the phases whose name contains this (nightly jobs, season opening, staff pages, admin API, statement import, collection run)")
	flag.Parse()
	ctx := context.Background()
	if *federation {
		return runFederation(ctx, o, f)
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average before        %s", load) // is someone else using the machine?
	}

	schema, dbURL, cleanup, err := freshDatabase(ctx, o)
	if err != nil {
		return err
	}
	defer cleanup()
	total := o.members * o.flows
	stepKeys, pageKeys := 0, 0
	if o.steps > 0 {
		stepKeys = o.members
	}
	if o.pages > 0 {
		pageKeys = o.members
	}
	env := append(os.Environ(), "PORTAL_DATABASE_URL="+dbURL, "PORTAL_HASH_SECRET="+secret,
		"PORTAL_COOKIE_SECURE=false", "PORTAL_PAYMENT_PROVIDER=test", "PORTAL_LOG_LEVEL=warn", "PORTAL_SERVER_TIMING=true")
	seed := exec.Command(o.binary, "seed", "demo", "--members", strconv.Itoa(total+stepKeys+pageKeys+1))
	seed.Env, seed.Stderr = env, os.Stderr
	if out, err := seed.Output(); err != nil {
		return fmt.Errorf("seed: %w (%s)", err, out)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	base := "http://" + addr
	server := exec.Command(o.binary, "serve")
	server.Env = append(env, "PORTAL_ADDR="+addr, "PORTAL_BASE_URL="+base)
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		return err
	}
	stopServer := sync.OnceFunc(func() { server.Process.Kill(); server.Wait() })
	defer stopServer()
	if err := waitReady(base + "/readyz"); err != nil {
		return err
	}

	// The step loop and the page loads run first, on a quiet server: the
	// flows leave confirmation mails (with PDF cards) in the job queue,
	// whose work would be counted against them. One flow first, alone,
	// finds the committing step, which the step loop stops before.
	rss := newRSSWatch(server.Process.Pid)
	warmUp, err := flow(base, fmt.Sprintf("demo-%d", total+stepKeys+pageKeys+1), 0)
	if err != nil {
		return fmt.Errorf("warm-up flow: %w", err)
	}
	committingStep := warmUp[len(warmUp)-1].step
	var steps stepLoopResult
	if o.steps > 0 {
		if steps, err = stepLoop(base, server.Process.Pid, total, committingStep, o); err != nil {
			return fmt.Errorf("step loop: %w", err)
		}
	}
	var pages []time.Duration
	if o.pages > 0 {
		if pages, err = pageLoads(base, total+stepKeys, o); err != nil {
			return fmt.Errorf("page loads: %w", err)
		}
	}
	waits.reset()

	keys := make(chan string, total)
	for i := 1; i <= total; i++ {
		keys <- fmt.Sprintf("demo-%d", i)
	}
	close(keys)
	var (
		mu      sync.Mutex
		stats   []sample
		failure error
	)
	start := time.Now()
	var wg sync.WaitGroup
	for range o.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range keys {
				samples, err := flow(base, key, o.think)
				mu.Lock()
				stats = append(stats, samples...)
				if err != nil && failure == nil {
					failure = fmt.Errorf("%s: %w", key, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	peak := rss.stop()
	if failure != nil {
		return failure
	}
	peak = max(peak, rss.stopAgain())
	stopServer()
	var ref referenceResult
	if o.reference > 0 {
		if ref, err = runReference(ctx, o, dbURL, schema); err != nil {
			return fmt.Errorf("reference: %w", err)
		}
	}
	report(o, schema, total, elapsed, stats, peak, steps, pages, ref, waits)
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// freshDatabase creates the database of this run: a schema on PostgreSQL,
// a file in a temporary directory with -sqlite.
func freshDatabase(ctx context.Context, o options) (string, string, func(), error) {
	if !o.sqlite {
		return freshSchema(ctx, o.databaseURL)
	}
	dir, err := os.MkdirTemp("", "portal-bench-")
	if err != nil {
		return "", "", nil, err
	}
	path := dir + "/bench.db"
	return path, "sqlite:" + path, func() { os.RemoveAll(dir) }, nil
}

// freshSchema creates a schema for this run and returns the URL that uses it.
func freshSchema(ctx context.Context, base string) (string, string, func(), error) {
	db, err := engine.OpenDB(base)
	if err != nil {
		return "", "", nil, err
	}
	b := make([]byte, 4)
	rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		return "", "", nil, fmt.Errorf("create schema (is PostgreSQL at %s running?): %w", base, err)
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	cleanup := func() {
		db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		db.Close()
	}
	return schema, base + sep + "search_path=" + schema, cleanup, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("server did not become ready in 30 s")
}

// sample is one POST /api/forms/next.
type sample struct {
	step      int // the step answered
	latency   time.Duration
	session   int
	handler   int
	tx        int
	committed bool
}

var timingPattern = regexp.MustCompile(`db-session;desc="(\d+)", db;desc="(\d+)", db-tx;desc="(\d+)"`)

type member struct {
	base   string
	client *http.Client
}

func (m *member) call(method, path string, body any, want int) (*http.Response, []byte, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, m.base+path, rd)
	if err != nil {
		return nil, nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	res, err := m.client.Do(req)
	if err != nil {
		return nil, nil, 0, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	waits.add(kindOf(path), took)
	if err != nil {
		return nil, nil, 0, err
	}
	if res.StatusCode != want {
		return nil, nil, 0, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	return res, raw, took, nil
}

// transport keeps a connection per member open; the default keeps only two
// idle connections per host, and re-dialling would measure TCP set-up instead.
var transport = &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}

// signIn signs key in with its hash link's hash and loads its new
// registration; people are the persons it can select.
func signIn(base, key string) (m *member, f formclient.Form, people []map[string]any, err error) {
	jar, _ := cookiejar.New(nil)
	m = &member{base: base, client: &http.Client{Jar: jar, Timeout: 15 * time.Second, Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	sum := md5.Sum([]byte(secret + key))
	if _, _, _, err := m.call(http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": key, "hash": hex.EncodeToString(sum[:])}, 200); err != nil {
		return nil, f, nil, err
	}
	_, raw, _, err := m.call(http.MethodGet, "/api/forms/membership/1?userKey="+url.QueryEscape(key), nil, 201)
	if err != nil {
		return nil, f, nil, err
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, f, nil, err
	}
	for _, p := range f.People {
		if p.CanSelect {
			people = append(people, map[string]any{"id": p.ID})
		}
	}
	return m, f, people, nil
}

// flow runs one member from sign-in to a paid registration.
func flow(base, key string, think time.Duration) ([]sample, error) {
	m, f, people, err := signIn(base, key)
	if err != nil {
		return nil, err
	}
	var samples []sample
	for f.ProcessState != "DONE" {
		// People do not answer in lockstep: spread the pause over 0.5x to 1.5x.
		time.Sleep(time.Duration(float64(think) * (0.5 + mrand.Float64())))
		var s sample
		if f, s, err = m.next(f, people); err != nil {
			return samples, err
		}
		samples = append(samples, s)
		people = answersTo(f)
	}
	// The payment URL is the portal's stable pay link: following it opens
	// (or reuses) the attempt's checkout and redirects to the test gateway,
	// where the member decides.
	pay, err := url.Parse(*f.PaymentURL)
	if err != nil {
		return samples, err
	}
	payStart := time.Now()
	res, err := m.client.Get(base + pay.RequestURI())
	if err != nil {
		return samples, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	checkout, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return samples, fmt.Errorf("pay link: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, base+checkout.Path, strings.NewReader("status=success"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err = m.client.Do(req)
	if err != nil {
		return samples, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	waits.add("test gateway payment", time.Since(payStart))
	ret, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return samples, fmt.Errorf("gateway: %d", res.StatusCode)
	}
	_, page, _, err := m.call(http.MethodGet, ret.RequestURI(), nil, 200)
	if err == nil && !bytes.Contains(page, []byte("registration complete")) {
		err = errors.New("payment return did not confirm")
	}
	return samples, err
}

// next posts people's answers to f's step and returns the next form.
func (m *member) next(f formclient.Form, people []map[string]any) (formclient.Form, sample, error) {
	res, raw, took, err := m.call(http.MethodPost, "/api/forms/next", map[string]any{"processId": f.ProcessID, "step": f.Step, "people": people}, 200)
	if err != nil {
		return f, sample{}, err
	}
	s := sample{step: f.Step, latency: took}
	if mt := timingPattern.FindStringSubmatch(res.Header.Get("Server-Timing")); mt != nil {
		s.session, _ = strconv.Atoi(mt[1])
		s.handler, _ = strconv.Atoi(mt[2])
		s.tx, _ = strconv.Atoi(mt[3])
	}
	var next formclient.Form
	if err := json.Unmarshal(raw, &next); err != nil {
		return f, s, err
	}
	s.committed = next.ProcessState == "DONE"
	return next, s, nil
}

// answersTo gives a valid answer of every person the question asks.
func answersTo(f formclient.Form) []map[string]any {
	var people []map[string]any
	for i, p := range f.People {
		if !p.Hide && f.QuestionType != nil {
			people = append(people, map[string]any{"id": p.ID, "answer": formclient.DemoAnswer(f, i)})
		}
	}
	return people
}

// waitTimes adds up, per kind of request, how long members waited for
// answers: where a flow's time goes, besides next.
type waitTimes struct {
	mu    sync.Mutex
	kinds []string
	total map[string]time.Duration
	count map[string]int
}

var waits = &waitTimes{total: map[string]time.Duration{}, count: map[string]int{}}

func (w *waitTimes) add(kind string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.total[kind]; !ok {
		w.kinds = append(w.kinds, kind)
	}
	w.total[kind] += d
	w.count[kind]++
}

// reset forgets the waits so far (the warm-up's, the step loop's and the page loads').
func (w *waitTimes) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds, w.total, w.count = nil, map[string]time.Duration{}, map[string]int{}
}

func kindOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/auth/"):
		return "sign-in"
	case strings.HasPrefix(path, "/api/forms/next"):
		return "next"
	case strings.HasPrefix(path, "/api/forms/"):
		return "load form"
	case strings.HasPrefix(path, "/membership/payment-return"):
		return "payment return"
	}
	return "page"
}

// rssWatch samples the server's peak resident set (VmHWM) until stopped.
type rssWatch struct {
	pid  int
	done chan struct{}
	peak chan int
}

func newRSSWatch(pid int) *rssWatch {
	w := &rssWatch{pid: pid, done: make(chan struct{}), peak: make(chan int, 1)}
	go func() {
		for {
			select {
			case <-w.done:
				w.peak <- readHWM(pid)
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return w
}

func (w *rssWatch) stop() int { close(w.done); return <-w.peak }

// stopAgain reads the peak once more after stop (VmHWM only grows).
func (w *rssWatch) stopAgain() int { return readHWM(w.pid) }

// readHWM reads the peak resident set size in KiB from /proc.
func readHWM(pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb
		}
	}
	return -1
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func report(o options, schema string, flows int, elapsed time.Duration, stats []sample, peakKB int, steps stepLoopResult, pages []time.Duration, ref referenceResult, waits *waitTimes) {
	var all, mid []time.Duration
	var midHandler, commitHandler, sessionTotal, midMax, commitMax, commits, txTotal int
	for _, s := range stats {
		all = append(all, s.latency)
		sessionTotal += s.session
		txTotal += s.tx
		if s.committed {
			commits++
			commitHandler += s.handler
			commitMax = max(commitMax, s.handler)
			continue
		}
		mid = append(mid, s.latency)
		midHandler += s.handler
		midMax = max(midMax, s.handler)
	}
	slices.Sort(all)
	slices.Sort(mid)
	var waited time.Duration
	for _, d := range waits.total {
		waited += d
	}
	fmt.Printf("members (concurrent)        %d, think time %s\n", o.members, o.think)
	fmt.Printf("flows completed             %d in %s\n", flows, elapsed.Round(time.Millisecond))
	fmt.Printf("flows/s                     %.1f\n", float64(flows)/elapsed.Seconds())
	fmt.Printf("next requests               %d\n", len(all))
	fmt.Printf("next p50 / p99 (all)        %s / %s\n", percentile(all, 0.50).Round(10*time.Microsecond), percentile(all, 0.99).Round(10*time.Microsecond))
	fmt.Printf("next p50 / p99 (no commit)  %s / %s\n", percentile(mid, 0.50).Round(10*time.Microsecond), percentile(mid, 0.99).Round(10*time.Microsecond))
	if len(mid) > 0 && commits > 0 {
		fmt.Printf("statements per next         %.2f avg, %d max (question steps, besides the session lookup)\n", float64(midHandler)/float64(len(mid)), midMax)
		fmt.Printf("statements per commit next  %.2f avg, %d max (last step: memberships, order, lines, payment)\n", float64(commitHandler)/float64(commits), commitMax)
		fmt.Printf("session lookup statements   %.2f avg per request\n", float64(sessionTotal)/float64(len(all)))
		fmt.Printf("BEGIN/COMMIT per next       %.2f avg (not counted above)\n", float64(txTotal)/float64(len(all)))
	}
	for _, k := range waits.kinds {
		fmt.Printf("  waiting for %-15s %4.1f%% of the members' time (%d requests, mean %s)\n", k,
			100*float64(waits.total[k])/float64(waited), waits.count[k], (waits.total[k] / time.Duration(waits.count[k])).Round(10*time.Microsecond))
	}
	fmt.Printf("server peak RSS             %.1f MB\n", float64(peakKB)/1024)
	if len(pages) > 0 {
		slices.Sort(pages)
		fmt.Printf("step page loads             %d, p50 / p99 %s / %s (GET /membership/register/1/step/1, %d signed-in members)\n",
			len(pages), percentile(pages, 0.50).Round(10*time.Microsecond), percentile(pages, 0.99).Round(10*time.Microsecond), o.members)
	}
	nextPerSecond := float64(len(all)) / elapsed.Seconds()
	fmt.Printf("flows: next/s               %.0f (next requests over the whole flows phase, sign-in, form load and payment included)\n", nextPerSecond)
	var loopPerSecond float64
	if len(steps.nexts) > 0 {
		lat := make([]time.Duration, len(steps.nexts))
		handler := 0
		for i, s := range steps.nexts {
			lat[i] = s.latency
			handler += s.handler
		}
		slices.Sort(lat)
		loopPerSecond = float64(len(lat)) / steps.elapsed.Seconds()
		fmt.Printf("step loop: next/s           %.0f (%d members answering questions in a closed loop for %s; %d resets to start over, %d next)\n",
			loopPerSecond, o.members, steps.elapsed.Round(time.Millisecond), steps.resets, len(lat))
		fmt.Printf("step loop: next p50 / p99   %s / %s (target p99 under 50 ms), %.2f statements per next\n",
			percentile(lat, 0.50).Round(10*time.Microsecond), percentile(lat, 0.99).Round(10*time.Microsecond), float64(handler)/float64(len(lat)))
		var selections, questions []time.Duration
		for _, s := range steps.nexts {
			if s.step == 0 {
				selections = append(selections, s.latency)
			} else {
				questions = append(questions, s.latency)
			}
		}
		slices.Sort(selections)
		slices.Sort(questions)
		fmt.Printf("step loop: p50 / p99 by kind person selection %s / %s, questions %s / %s\n",
			percentile(selections, 0.50).Round(10*time.Microsecond), percentile(selections, 0.99).Round(10*time.Microsecond),
			percentile(questions, 0.50).Round(10*time.Microsecond), percentile(questions, 0.99).Round(10*time.Microsecond))
		fmt.Printf("step loop: CPU per next     portal %.2f ms, PostgreSQL %.2f ms, load generator %.2f ms (CPU time over the loop, resets included, / next)\n",
			1000*steps.portalCPU/float64(len(lat)), 1000*steps.databaseCPU/float64(len(lat)), 1000*steps.clientCPU/float64(len(lat)))
	}
	if ref.tps > 0 {
		fmt.Printf("reference                   %.0f tx/s (%s, %s)\n", ref.tps, ref.name, o.reference)
		if len(ref.latencies) > 0 {
			fmt.Printf("reference: p50 / p99        %s / %s (the raw step alone, the same clients)\n",
				percentile(ref.latencies, 0.50).Round(10*time.Microsecond), percentile(ref.latencies, 0.99).Round(10*time.Microsecond))
		}
		if ref.databaseCPU > 0 {
			fmt.Printf("reference: CPU per tx       PostgreSQL %.2f ms\n", 1000*ref.databaseCPU)
		}
		fmt.Printf("ratio flows next/s : ref    %.2f\n", nextPerSecond/ref.tps)
		if loopPerSecond > 0 {
			fmt.Printf("ratio step loop next/s : ref %.2f (target at least 0.5)\n", loopPerSecond/ref.tps)
		}
	}
	if o.sqlite {
		fmt.Printf("(SQLite file %s, removed)\n", schema)
	} else {
		fmt.Printf("(schema %s, dropped)\n", schema)
	}
}
