package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/banking"
	"portal/engine/demodata/federation"
)

// The federation benchmark (`make bench-federation`, issue 42): a fresh
// PostgreSQL database seeded with `portal seed federation`, the portal
// serving it as its own process, and each of a federation's workloads
// against its target, with a reference measured in the same run where
// one exists. See docs/BENCHMARKS.md, section "A federation's season".

// fedOptions are the federation benchmark's flags.
type fedOptions struct {
	clubs, persons int
	// opening is how many of the season opening's households register
	// (0: all the seed made, persons/10).
	opening     int
	concurrency int
	// paced is how many of the opening's households arrive at the
	// season's pace (all households spread over openingWindow), each
	// pausing about openingThink between its pages, before the rest
	// register as fast as the portal answers; 0: none.
	paced         int
	openingWindow time.Duration
	openingThink  time.Duration
	// nightThink is the nightly jobs' step loop members' mean pause
	// before each answer (0: a closed loop, as fast as answered).
	nightThink  time.Duration
	staff       int
	staffRounds int
	// staffThink is each staff member's mean pause between two pages
	// (spread over 0.5x to 1.5x; default 3 s): staff read what they
	// loaded. 0 loads them without a pause, which saturates two cores.
	staffThink time.Duration
	doc        string
	workdir    string
	// existing, when set, is a database seeded before (portal seed
	// federation) to run on instead of a fresh one; only, when set, runs
	// the phases whose name contains it.
	existing, only string
}

// fedRow is one line of the results: a workload, what it took, its
// reference of the same run, and the target.
type fedRow struct {
	work, measured, reference, target, verdict string
}

type fedRun struct {
	o      options
	f      fedOptions
	binary string
	dbURL  string
	db     *bun.DB
	env    []string
	base   string
	// members is base on the demo club's hostname (localhost): with
	// many clubs, a member's address names the club.
	members string
	server  *exec.Cmd
	rows    []fedRow
	notes   []string
	started time.Time
	load    []string
}

func (r *fedRun) add(work, measured, reference, target string, met bool, hasTarget bool) {
	verdict := ""
	if hasTarget {
		verdict = "**missed**"
		if met {
			verdict = "met"
		}
	}
	r.rows = append(r.rows, fedRow{work, measured, reference, target, verdict})
	fmt.Printf("%-58s %-40s %-40s %s %s\n", work, measured, reference, target, verdict)
}

func (r *fedRun) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.notes = append(r.notes, s)
	fmt.Println("  " + s)
}

func (r *fedRun) loadAverage(when string) {
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(raw))
		if len(f) >= 3 {
			r.load = append(r.load, fmt.Sprintf("%s %s", when, strings.Join(f[:3], " ")))
			fmt.Printf("load average %s: %s\n", when, strings.Join(f[:3], " "))
		}
	}
}

// runFederation is loadgen -federation.
func runFederation(ctx context.Context, o options, f fedOptions) error {
	r := &fedRun{o: o, f: f, binary: o.binary, started: time.Now()}
	r.loadAverage("at the start")
	if f.workdir == "" {
		dir, err := os.MkdirTemp("", "portal-fed-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		f.workdir = dir
		r.f.workdir = dir
	}
	dbURL := f.existing
	if dbURL == "" {
		name := "portal_fed_bench_" + randomHex(4)
		var drop func()
		var err error
		if dbURL, drop, err = createDatabase(ctx, o.databaseURL, name); err != nil {
			return err
		}
		defer drop()
	}
	r.dbURL = dbURL
	r.env = append(os.Environ(), "PORTAL_DATABASE_URL="+dbURL, "PORTAL_HASH_SECRET="+secret,
		"PORTAL_COOKIE_SECURE=false", "PORTAL_PAYMENT_PROVIDER=test", "PORTAL_LOG_LEVEL=warn", "PORTAL_SERVER_TIMING=true")
	if f.existing == "" {
		if err := r.seed(ctx); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	var err error
	if r.db, err = engine.OpenDB(dbURL); err != nil {
		return err
	}
	defer r.db.Close()
	if err := r.startServer(); err != nil {
		return err
	}
	defer r.stopServer()
	rss := newRSSWatch(r.server.Process.Pid)
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"nightly jobs", r.nightlyJobs},
		{"night's mail", r.nightsMail},
		{"season opening", r.seasonOpening},
		{"staff pages", r.staffPages},
		{"admin API", r.adminAPI},
		{"statement import", r.statementImport},
		{"collection run", r.collectionRun},
	}
	for i, s := range steps {
		if f.only != "" && !strings.Contains(s.name, f.only) {
			continue
		}
		if i > 1 {
			// Each of the day's phases starts once the job workers have
			// sent what the phases before queued (the night's mail, the
			// opening's confirmations), so that none is measured against
			// another's mail; a phase run alone waits for what its
			// server's first schedules queued.
			n, took, err := r.drainJobs(ctx, 30*time.Minute)
			if err != nil {
				return err
			}
			if n > 0 {
				r.note("Before the %s the job workers finished %d jobs in %s.", s.name, n, secs(took))
			}
		}
		r.loadAverage("before the " + s.name)
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	peak := max(rss.stop(), rss.stopAgain())
	r.add("server peak RSS (VmHWM, whole run)", fmt.Sprintf("%.0f MB", float64(peak)/1024), "", "< 300 MB", peak < 300*1024, true)
	r.loadAverage("at the end")
	if f.doc != "" {
		return r.writeDoc()
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// createDatabase creates database name on the server of base and returns
// its URL and a function that drops it.
func createDatabase(ctx context.Context, base, name string) (string, func(), error) {
	admin, err := engine.OpenDB(base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create database (is PostgreSQL at %s running?): %w", base, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}, nil
}

// command runs the portal binary (or another program) with the run's
// environment and returns how long it took and its standard output.
func (r *fedRun) command(name string, args ...string) (time.Duration, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = r.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return took, out.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, errOut.String())
	}
	return took, out.String(), nil
}

func (r *fedRun) portal(args ...string) (time.Duration, string, error) {
	return r.command(r.binary, args...)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// seed times the federation seed, its second (idempotent) run and the
// reference: pg_restore of a dump of the same data into an empty database.
func (r *fedRun) seed(ctx context.Context) error {
	clubs, persons := strconv.Itoa(r.f.clubs), strconv.Itoa(r.f.persons)
	took, out, err := r.portal("seed", "federation", "--clubs", clubs, "--persons", persons)
	if err != nil {
		return err
	}
	fmt.Print(out)
	again, _, err := r.portal("seed", "federation", "--clubs", clubs, "--persons", persons)
	if err != nil {
		return err
	}
	// The step loop's members (demo-1 ...), in the demo club beside the opening's households.
	if _, _, err := r.portal("seed", "demo", "--members", strconv.Itoa(r.o.members+2)); err != nil {
		return err
	}
	if _, _, err := r.portal("orgs", "set", "--org", "1", "--hosts", "localhost"); err != nil {
		return err
	}
	dump := filepath.Join(r.f.workdir, "federation.dump")
	dumped, _, err := r.command("pg_dump", "-Fc", "-Z0", "-f", dump, "-d", r.dbURL)
	if err != nil {
		return err
	}
	refURL, drop, err := createDatabase(ctx, r.o.databaseURL, "portal_fed_ref_"+randomHex(4))
	if err != nil {
		return err
	}
	defer drop()
	restored, _, err := r.command("pg_restore", "--no-owner", "-d", refURL, dump)
	if err != nil {
		return err
	}
	size, _ := os.Stat(dump)
	r.add(fmt.Sprintf("seed federation --clubs %s --persons %s", clubs, persons), secs(took),
		fmt.Sprintf("pg_restore of its dump %s (%.1f×); pg_dump %s", secs(restored), took.Seconds()/restored.Seconds(), secs(dumped)),
		"< 5 min", took < 5*time.Minute, true)
	r.add("seed federation again (idempotent: nothing to add)", secs(again), "", "", true, false)
	if size != nil {
		r.note("The dump (pg_dump -Fc -Z0) is %.0f MB.", float64(size.Size())/(1<<20))
	}
	var counts []string
	for _, t := range []string{"organisations", "persons", "process_instances", "orders", "order_lines", "memberships", "payments", "debit_mandates"} {
		var n int
		if err := scanInt(ctx, refURL, "SELECT count(*) FROM "+t, &n); err == nil {
			counts = append(counts, fmt.Sprintf("%s %d", t, n))
		}
	}
	r.note("Seeded rows: %s.", strings.Join(counts, ", "))
	return nil
}

func scanInt(ctx context.Context, dbURL, query string, v *int) error {
	db, err := engine.OpenDB(dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRowContext(ctx, query).Scan(v)
}

func (r *fedRun) startServer() error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	r.base = "http://" + addr
	_, port, _ := strings.Cut(addr, ":")
	r.members = "http://localhost:" + port
	r.server = exec.Command(r.binary, "serve")
	r.server.Env = append(r.env, "PORTAL_ADDR="+addr, "PORTAL_BASE_URL="+r.base)
	r.server.Stderr = os.Stderr
	if err := r.server.Start(); err != nil {
		return err
	}
	return waitReady(r.base + "/readyz")
}

func (r *fedRun) stopServer() {
	if r.server != nil && r.server.Process != nil {
		r.server.Process.Kill()
		r.server.Wait()
	}
}

// nightlyKinds are the nightly jobs of the targets.
var nightlyKinds = []string{engine.KindQueueReminders, engine.KindSuspendIdle, engine.KindArchiveFinished, engine.KindApplyRetention, engine.KindExpireMandates}

// timedNext is one next of the background step loop, with when it ended.
type timedNext struct {
	at      time.Time
	latency time.Duration
}

// backgroundSteps runs the step loop (loadgen's, on the demo club's
// members demo-1 ...) until stop is closed, and returns its samples.
func (r *fedRun) backgroundSteps(lastStep int, stop <-chan struct{}) func() ([]timedNext, error) {
	var (
		mu      sync.Mutex
		samples []timedNext
		failure error
		wg      sync.WaitGroup
	)
	for i := range r.o.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, f, people, err := signIn(r.members, fmt.Sprintf("demo-%d", i+1))
			selection := people
			var mine []timedNext
			for err == nil {
				select {
				case <-stop:
					mu.Lock()
					samples = append(samples, mine...)
					mu.Unlock()
					return
				default:
				}
				if r.f.nightThink > 0 {
					// Members who read the question before answering.
					select {
					case <-stop:
						continue
					case <-time.After(time.Duration(float64(r.f.nightThink) * (0.5 + mrand.Float64()))):
					}
				}
				if f.Step >= lastStep {
					if _, _, _, err = m.call(http.MethodPost, "/api/forms/processes/"+f.ProcessID+"/reset", map[string]any{}, 200); err != nil {
						break
					}
					f.Step, people = 0, selection
				}
				var s sample
				if f, s, err = m.next(f, people); err != nil {
					break
				}
				mine = append(mine, timedNext{time.Now(), s.latency})
				people = answersTo(f)
			}
			mu.Lock()
			samples = append(samples, mine...)
			if failure == nil {
				failure = err
			}
			mu.Unlock()
		}()
	}
	return func() ([]timedNext, error) {
		wg.Wait()
		return samples, failure
	}
}

// loopPace says how the step loop's members answer.
func loopPace(think time.Duration) string {
	if think <= 0 {
		return "in a closed loop, as fast as answered"
	}
	return fmt.Sprintf("each pausing %s on average before an answer", think)
}

// committingStep runs one flow of a demo member alone and returns the
// step whose answer commits (the step loop stops before it).
func (r *fedRun) committingStep() (int, error) {
	warm, err := flow(r.members, fmt.Sprintf("demo-%d", r.o.members+1), 0)
	if err != nil {
		return 0, fmt.Errorf("warm-up flow: %w", err)
	}
	return warm[len(warm)-1].step, nil
}

// jobWindow is one job's run as polled from the jobs table.
type jobWindow struct {
	kind          string
	id            int64
	queued        time.Time
	running, done time.Time
	state         string
	// failures: an attempt failed (and was retried).
	failures bool
}

// pollJobs watches the jobs of kinds (ids above after) until none is
// queued or running, and returns when each was seen running and done.
func (r *fedRun) pollJobs(ctx context.Context, after int64, kinds []string, timeout time.Duration) (map[int64]*jobWindow, error) {
	seen := map[int64]*jobWindow{}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var rows []struct {
			ID    int64  `bun:"id"`
			Kind  string `bun:"kind"`
			State string `bun:"state"`
		}
		if err := r.db.NewSelect().Table("jobs").Column("id", "kind", "state").Where("id > ? AND kind IN (?)", after, bun.List(kinds)).Scan(ctx, &rows); err != nil {
			return seen, err
		}
		// The night's job of each kind only: an hourly schedule queues
		// its next job at the hour, behind the night's mails.
		first := map[string]int64{}
		for _, j := range rows {
			if id, ok := first[j.Kind]; !ok || j.ID < id {
				first[j.Kind] = j.ID
			}
		}
		now := time.Now()
		open := 0
		for _, j := range rows {
			if first[j.Kind] != j.ID {
				continue
			}
			w := seen[j.ID]
			if w == nil {
				w = &jobWindow{kind: j.Kind, id: j.ID, queued: now}
				seen[j.ID] = w
			}
			w.state = j.State
			switch j.State {
			case "queued", "failed": // failed: to be retried
				if j.State == "failed" {
					w.failures = true
				}
				open++
			case "running":
				open++
				if w.running.IsZero() {
					w.running = now
				}
			default:
				if w.done.IsZero() {
					w.done = now
					if w.running.IsZero() {
						w.running = w.queued
					}
				}
			}
		}
		if open == 0 && len(rows) > 0 {
			return seen, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return seen, fmt.Errorf("jobs still open after %s", timeout)
}

// nightlyJobs runs each nightly job over the whole federation (`portal
// jobs run KIND`, one after another) while members answer steps in a
// closed loop, and reports each job's time and the loop's p99 while it ran.
// The schedules' own first runs at the server's start come first, and are
// waited for: they are the first night (reported too).
func (r *fedRun) nightlyJobs(ctx context.Context) error {
	lastStep, err := r.committingStep()
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	wait := r.backgroundSteps(lastStep, stop)
	quiet := func() ([]timedNext, error) {
		close(stop)
		return wait()
	}
	first, err := r.pollJobs(ctx, 0, nightlyKinds, 15*time.Minute)
	if err != nil {
		quiet()
		return err
	}
	// What the night left for the job workers to send (mails to members).
	var left int
	if err := r.db.NewSelect().Table("jobs").ColumnExpr("count(*)").Where("state IN ('queued', 'failed')").Scan(ctx, &left); err != nil {
		quiet()
		return err
	}
	// A quiet stretch after the jobs, for the loop's p99 without them.
	time.Sleep(5 * time.Second)
	quietFrom := time.Now().Add(-5 * time.Second)
	samples, err := quiet()
	if err != nil {
		return fmt.Errorf("step loop: %w", err)
	}
	var quietLat []time.Duration
	for _, s := range samples {
		if s.at.After(quietFrom) {
			quietLat = append(quietLat, s.latency)
		}
	}
	slices.Sort(quietLat)
	ref := fmt.Sprintf("loop alone: p99 %s", ms(percentile(quietLat, 0.99)))
	p99In := func(from, to time.Time) (time.Duration, int) {
		var lat []time.Duration
		for _, s := range samples {
			if !s.at.Before(from) && !s.at.After(to) {
				lat = append(lat, s.latency)
			}
		}
		slices.Sort(lat)
		return percentile(lat, 0.99), len(lat)
	}
	byKind := map[string]*jobWindow{}
	for _, w := range first {
		if b := byKind[w.kind]; b == nil || w.done.Sub(w.running) > b.done.Sub(b.running) {
			byKind[w.kind] = w
		}
	}
	outcome := func(w *jobWindow) string {
		s := w.state
		if w.failures {
			s += " after a failed attempt"
		}
		return s
	}
	for _, kind := range nightlyKinds {
		w := byKind[kind]
		if w == nil {
			continue
		}
		took := w.done.Sub(w.running)
		p99, n := p99In(w.running, w.done)
		r.add("nightly job "+kind, fmt.Sprintf("%s (%s); step p99 %s (%d next)", secs(took), outcome(w), ms(p99), n), ref,
			"< 60 s; step p99 < 50 ms", took < time.Minute && w.state == "succeeded" && !w.failures && (n == 0 || p99 < 50*time.Millisecond), true)
	}
	r.note("Nightly jobs: the server's schedules queue every scheduled kind at its start, as at midnight, over the whole federation (the first night: every backlog at once); the job workers run them while %d members of the demo club answer questions (%s); each job's time is from seen running to seen finished (the jobs table polled every 50 ms), and its step p99 is over the next answered meanwhile. The night left %d jobs queued (mostly the members' reminder and renewal mails), which the workers send before the day's phases (the night's mail).", r.o.members, loopPace(r.f.nightThink), left)
	return nil
}

// drainJobs waits until no job is due (queued or running, and due by
// now) and returns how many finished meanwhile and how long it took.
func (r *fedRun) drainJobs(ctx context.Context, timeout time.Duration) (int, time.Duration, error) {
	start := time.Now()
	var before int
	if err := r.db.NewSelect().Table("jobs").ColumnExpr("count(*)").Where("state = 'succeeded'").Scan(ctx, &before); err != nil {
		return 0, 0, err
	}
	for {
		var due int
		if err := r.db.NewSelect().Table("jobs").ColumnExpr("count(*)").
			Where("state IN ('queued', 'running') AND run_at <= ?", time.Now().UTC()).Scan(ctx, &due); err != nil {
			return 0, 0, err
		}
		if due == 0 {
			break
		}
		if time.Since(start) > timeout {
			return 0, 0, fmt.Errorf("%d jobs still due after %s", due, timeout)
		}
		time.Sleep(time.Second)
	}
	var after int
	if err := r.db.NewSelect().Table("jobs").ColumnExpr("count(*)").Where("state = 'succeeded'").Scan(ctx, &after); err != nil {
		return 0, 0, err
	}
	return after - before, time.Since(start), nil
}

// nightsMail lets the job workers send what the night queued (the
// members' reminder and renewal mails) before the day's phases, which
// then run on a quiet portal as a club's day does: the season opening and
// the staff pages are not measured against a night's mail.
func (r *fedRun) nightsMail(ctx context.Context) error {
	n, took, err := r.drainJobs(ctx, 30*time.Minute)
	if err != nil {
		return err
	}
	r.add(fmt.Sprintf("the night's mail: %d jobs sent by the job workers", n), fmt.Sprintf("%s (%.0f a second)", secs(took), float64(n)/took.Seconds()), "", "", true, false)
	return nil
}

// seasonOpening runs the season opening: households fed-open-1 ... from
// sign-in to paid. The first r.f.paced arrive at the season's pace, as
// members do: the whole opening spread over r.f.openingWindow (10,000
// households in 10 minutes: one every 60 ms), each pausing about
// r.f.openingThink between its pages, at most r.f.concurrency at a time.
// Their next latency is the target's: what a member sees while the
// season opens. The rest register r.f.concurrency at a time without a
// pause, as fast as the portal answers: the capacity, which says whether
// all of them fit in the window.
func (r *fedRun) seasonOpening(ctx context.Context) error {
	n := r.f.opening
	if n == 0 {
		n, _, _, _ = federation.Size{Clubs: r.f.clubs, Persons: r.f.persons}.Households()
	}
	paced := min(r.f.paced, n)
	if r.f.openingWindow <= 0 {
		paced = 0
	}
	var (
		mu      sync.Mutex
		failure error
	)
	// household runs one household's flow and keeps its samples in *into.
	household := func(key string, think time.Duration, into *[]sample) bool {
		s, err := flow(r.members, key, think)
		mu.Lock()
		defer mu.Unlock()
		*into = append(*into, s...)
		if err != nil && failure == nil {
			failure = fmt.Errorf("%s: %w", key, err)
		}
		return err == nil
	}
	waits.reset()
	cpuBefore := processCPU(r.server.Process.Pid)
	start := time.Now()

	// At the season's pace: household i starts at i × window/n, when one
	// of the concurrency slots is free (a late start is counted).
	var pacedStats []sample
	var late int
	var busy time.Duration // the paced households' time, summed: in flight = busy ÷ elapsed
	if paced > 0 {
		every := r.f.openingWindow / time.Duration(n)
		slots := make(chan struct{}, r.f.concurrency)
		var wg sync.WaitGroup
		for i := range paced {
			if d := time.Until(start.Add(time.Duration(i) * every)); d > 0 {
				time.Sleep(d)
			}
			select {
			case slots <- struct{}{}:
			default:
				late++
				slots <- struct{}{}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				began := time.Now()
				household(fmt.Sprintf("%s%d", federation.OpeningPrefix, i+1), r.f.openingThink, &pacedStats)
				mu.Lock()
				busy += time.Since(began)
				mu.Unlock()
				<-slots
			}()
		}
		wg.Wait()
		if failure != nil {
			return failure
		}
	}
	pacedElapsed := time.Since(start)

	// The rest as fast as the portal answers, concurrency at a time.
	keys := make(chan string, n)
	for i := paced + 1; i <= n; i++ {
		keys <- fmt.Sprintf("%s%d", federation.OpeningPrefix, i)
	}
	close(keys)
	var stats []sample
	var wg sync.WaitGroup
	restStart := time.Now()
	for range r.f.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range keys {
				if !household(key, 0, &stats) {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed, restElapsed := time.Since(start), time.Since(restStart)
	if failure != nil {
		return failure
	}
	cpu := processCPU(r.server.Process.Pid) - cpuBefore
	latencies := func(ss []sample) (all, mid []time.Duration) {
		for _, s := range ss {
			all = append(all, s.latency)
			if !s.committed {
				mid = append(mid, s.latency)
			}
		}
		slices.Sort(all)
		slices.Sort(mid)
		return all, mid
	}
	// Fits the window when the paced part kept its pace and the rest, at
	// the portal's own rate, would fit in what the window leaves.
	rate := float64(n-paced) / restElapsed.Seconds()
	r.add(fmt.Sprintf("season opening: %d households sign-in → paid, %d at a time", n, r.f.concurrency),
		fmt.Sprintf("%s (%d at the season's pace in %s, %d as fast as answered at %.1f households/s)", secs(elapsed), paced, secs(pacedElapsed), n-paced, rate),
		"", "< 10 min", elapsed < 10*time.Minute, true)
	if paced > 0 {
		all, mid := latencies(pacedStats)
		r.add(fmt.Sprintf("season opening at its pace: next p99 (all / questions only), %d households", paced),
			ms(percentile(all, 0.99))+" / "+ms(percentile(mid, 0.99)),
			fmt.Sprintf("p50 %s; %.1f in flight", ms(percentile(all, 0.5)), busy.Seconds()/pacedElapsed.Seconds()), "< 50 ms", percentile(all, 0.99) < 50*time.Millisecond, true)
		r.note("Season opening at its pace: the first %d households arrive one every %s (%d households over %s), each pausing %s on average (0.5× to 1.5×) before each answer, at most %d at a time; %d waited for a free place.",
			paced, (r.f.openingWindow / time.Duration(n)).Round(time.Millisecond), n, r.f.openingWindow, r.f.openingThink, r.f.concurrency, late)
	}
	all, mid := latencies(stats)
	r.add("season opening as fast as answered: next p99 (all / questions only)", ms(percentile(all, 0.99))+" / "+ms(percentile(mid, 0.99)),
		fmt.Sprintf("p50 %s", ms(percentile(all, 0.5))), "(capacity; no target)", true, false)
	var parts []string
	for _, k := range waits.kinds {
		parts = append(parts, fmt.Sprintf("%s %d × %s", k, waits.count[k], ms(waits.total[k]/time.Duration(waits.count[k]))))
	}
	r.note("Season opening: %d next; mean wait per request: %s; the portal's CPU %.1f ms per household.", len(all)+len(pacedStats), strings.Join(parts, ", "), 1000*cpu/float64(n))
	return nil
}

// staffSession signs in to a club's staff pages through the development IdP.
func (r *fedRun) staffSession(slug, email string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(r.base + "/o/" + slug + "/staff/login/start")
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound || loc == "" {
		return nil, fmt.Errorf("staff login: status %d", res.StatusCode)
	}
	next := loc + "&login_as=" + url.QueryEscape(email)
	for range 10 {
		res, err = c.Get(next)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return c, nil
		}
		loc = res.Header.Get("Location")
		if loc == "" {
			return nil, fmt.Errorf("staff login: status %d at %s", res.StatusCode, next)
		}
		u, err := res.Request.URL.Parse(loc)
		if err != nil {
			return nil, err
		}
		next = u.String()
	}
	return nil, errors.New("staff login: too many redirects")
}

// staffPages loads the big club's staff pages with r.f.staff signed-in
// staff at once, every page r.f.staffRounds times each, in turns.
func (r *fedRun) staffPages(ctx context.Context) error {
	slug := federation.BankClub
	var org, period, reg int64
	var regs int
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM organisations WHERE slug = ?", slug).Scan(&org); err != nil {
		return err
	}
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM membership_periods WHERE organisation_id = ? AND status = ? ORDER BY start_date DESC LIMIT 1", org, engine.PeriodOpen).Scan(&period); err != nil {
		return err
	}
	if err := r.db.QueryRowContext(ctx, "SELECT max(id), count(*) FROM process_instances WHERE organisation_id = ? AND related_entity_id = ?", org, period).Scan(&reg, &regs); err != nil {
		return err
	}
	pages := []struct{ name, path string }{
		{"overview", "/staff"},
		{"registrations list", "/staff/registrations"},
		{"registrations search (name)", "/staff/registrations?q=" + url.QueryEscape("keller 41")},
		{"registrations search (e-mail)", "/staff/registrations?q=" + url.QueryEscape(slug+"-4321@example.org")},
		{"open payments", "/staff/open-payments"},
		{"a registration", fmt.Sprintf("/staff/registrations/%d", reg)},
		{"audit log", "/staff/audit"},
		{"year-end report page", "/staff/year-report"},
		{"year-end report CSV", "/staff/year-report.csv"},
		{"year-end report PDF", "/staff/year-report.pdf"},
	}
	clients := make([]*http.Client, r.f.staff)
	for i := range clients {
		c, err := r.staffSession(slug, "admin@"+slug+".example")
		if err != nil {
			return err
		}
		clients[i] = c
	}
	lat := make([][]time.Duration, len(pages))
	var mu sync.Mutex
	var failure error
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range r.f.staffRounds {
				for k := range pages {
					p := pages[(k+i+round)%len(pages)]
					if r.f.staffThink > 0 {
						time.Sleep(time.Duration(float64(r.f.staffThink) * (0.5 + mrand.Float64())))
					}
					start := time.Now()
					res, err := c.Get(r.base + "/o/" + slug + p.path)
					if err == nil {
						_, err = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if err == nil && res.StatusCode != http.StatusOK {
							err = fmt.Errorf("%s: status %d", p.path, res.StatusCode)
						}
					}
					took := time.Since(start)
					mu.Lock()
					lat[(k+i+round)%len(pages)] = append(lat[(k+i+round)%len(pages)], took)
					if err != nil && failure == nil {
						failure = err
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return failure
	}
	for i, p := range pages {
		slices.Sort(lat[i])
		p99 := percentile(lat[i], 0.99)
		r.add("staff: "+p.name, "p99 "+ms(p99), "p50 "+ms(percentile(lat[i], 0.5)), "p99 < 100 ms", p99 < 100*time.Millisecond, true)
	}
	pause := "without a pause between pages"
	if r.f.staffThink > 0 {
		pause = fmt.Sprintf("each pausing %s on average between pages", r.f.staffThink)
	}
	r.note("Staff pages: club %s (%d registrations in the open period, %d staff signed in as its admin, %d rounds of every page each, the pages in turns, %s).", slug, regs, r.f.staff, r.f.staffRounds, pause)
	return nil
}

// apiKey creates a write key of the organisation slug.
func (r *fedRun) apiKey(ctx context.Context, slug string) (int64, string, error) {
	var org int64
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM organisations WHERE slug = ?", slug).Scan(&org); err != nil {
		return 0, "", err
	}
	_, out, err := r.portal("apikeys", "create", "--org", strconv.FormatInt(org, 10), "--scope", "write", "--name", "federation bench")
	if err != nil {
		return 0, "", err
	}
	return org, strings.TrimSpace(out), nil
}

// psqlTime runs one statement through psql and returns how long it took.
func (r *fedRun) psqlTime(stdin io.Reader, sql string) (time.Duration, error) {
	cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", r.dbURL, "-c", sql)
	cmd.Stdin, cmd.Stdout = stdin, io.Discard
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("psql %s: %w: %s", sql, err, errOut.String())
	}
	return time.Since(start), nil
}

// adminAPI times the big club's period export (first byte and whole) and a
// person import of r.f.persons/10 rows, each with its COPY reference.
func (r *fedRun) adminAPI(ctx context.Context) error {
	slug := federation.BankClub
	org, key, err := r.apiKey(ctx, slug)
	if err != nil {
		return err
	}
	var period int64
	var regs int
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM membership_periods WHERE organisation_id = ? AND status = ? ORDER BY start_date DESC LIMIT 1", org, engine.PeriodOpen).Scan(&period); err != nil {
		return err
	}
	if err := r.db.QueryRowContext(ctx, "SELECT count(*) FROM process_instances WHERE related_entity_id = ?", period).Scan(&regs); err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: transport}
	var firsts, wholes []time.Duration
	var size int64
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/o/%s/api/admin/periods/%d/export/registrations", r.base, slug, period), nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return fmt.Errorf("export: status %d: %s", res.StatusCode, body)
		}
		one := make([]byte, 1)
		if _, err := io.ReadFull(res.Body, one); err != nil {
			return err
		}
		firsts = append(firsts, time.Since(start))
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		wholes = append(wholes, time.Since(start))
		size = n + 1
	}
	slices.Sort(firsts)
	slices.Sort(wholes)
	copyRef, err := r.psqlTime(nil, fmt.Sprintf(`\copy (SELECT pi.*, o.*, p.* FROM process_instances pi LEFT JOIN orders o ON o.process_instance_id = pi.id LEFT JOIN user_persons up ON up.user_key = pi.user_key AND up.organisation_id = pi.organisation_id LEFT JOIN persons p ON p.id = up.person_id WHERE pi.related_entity_id = %d) TO '/dev/null' WITH CSV HEADER`, period))
	if err != nil {
		return err
	}
	r.add(fmt.Sprintf("admin API: period export, %d registrations (%.1f MB)", regs, float64(size)/(1<<20)),
		fmt.Sprintf("first byte %s, whole %s (worst of 3)", ms(firsts[2]), ms(wholes[2])),
		fmt.Sprintf("psql COPY of the rows joined: %s (%.1f×)", ms(copyRef), wholes[2].Seconds()/copyRef.Seconds()),
		"first byte < 200 ms, whole < 5 s", firsts[2] < 200*time.Millisecond && wholes[2] < 5*time.Second, true)

	// Person import: new persons with external ids, each linked to a user key.
	rows := max(r.f.persons/10, 100)
	var csv bytes.Buffer
	csv.WriteString("externalId,firstName,lastName,dateOfBirth,email,userKeys\n")
	for i := range rows {
		fmt.Fprintf(&csv, "EXT-%06d,Imported%d,Family %d,%04d-%02d-%02d,import-%d@example.org,import-%d\n", i, i, i/3, 1950+i%60, 1+i%12, 1+i%28, i, i/2)
	}
	data := csv.Bytes()
	req, _ := http.NewRequest(http.MethodPost, r.base+"/o/"+slug+"/api/admin/persons/import", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "text/csv")
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("person import: status %d: %.500s", res.StatusCode, body)
	}
	ref, err := r.psqlTime(bytes.NewReader(data), `CREATE TEMP TABLE import_ref (external_id text, first_name text, last_name text, date_of_birth date, email text, user_keys text); \copy import_ref FROM STDIN WITH CSV HEADER`)
	if err != nil {
		// psql runs -c as one command: the \copy goes in a second one.
		ref, err = r.copyReference(data)
		if err != nil {
			return err
		}
	}
	r.add(fmt.Sprintf("admin API: person import, %d rows (CSV)", rows), secs(took),
		fmt.Sprintf("psql COPY of the same rows: %s (%.0f×)", ms(ref), took.Seconds()/ref.Seconds()), "< 20 s", took < 20*time.Second, true)
	return nil
}

// copyReference copies the import's CSV into a table of its own with psql.
func (r *fedRun) copyReference(data []byte) (time.Duration, error) {
	script := "CREATE TEMP TABLE import_ref (external_id text, first_name text, last_name text, date_of_birth date, email text, user_keys text);\n" +
		"\\copy import_ref FROM '" + filepath.Join(r.f.workdir, "import.csv") + "' WITH CSV HEADER\n"
	if err := os.WriteFile(filepath.Join(r.f.workdir, "import.csv"), data, 0o600); err != nil {
		return 0, err
	}
	cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", r.dbURL)
	cmd.Stdin = strings.NewReader(script)
	var errOut bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errOut, io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("psql copy: %w: %s", err, errOut.String())
	}
	return time.Since(start), nil
}

// statementImport imports a camt.053 of r.f.persons/10 credits to the big
// club's account, a tenth of them paying its open transfers: first as a
// dry run (matched, nothing captured), the reference, then for real.
func (r *fedRun) statementImport(ctx context.Context) error {
	slug := federation.BankClub
	var org int64
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM organisations WHERE slug = ?", slug).Scan(&org); err != nil {
		return err
	}
	credits := max(r.f.persons/10, 100)
	var open []struct {
		RF     string `bun:"provider_id"`
		Amount int64  `bun:"amount_minor"`
	}
	if err := r.db.NewSelect().Table("payments").Join("JOIN orders o ON o.id = payments.order_id").
		ColumnExpr("payments.provider_id, payments.amount_minor").
		Where("o.organisation_id = ? AND payments.status = ? AND payments.provider = 'bank_transfer' AND o.status = ?", org, engine.PaymentPending, engine.OrderUnpaid).
		OrderExpr("payments.id").Limit(int64(credits/10)).Scan(ctx, &open); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>
<GrpHdr><MsgId>FED-%[1]s</MsgId><CreDtTm>%[2]s</CreDtTm></GrpHdr>
<Stmt><Id>FED-%[1]s</Id><CreDtTm>%[2]s</CreDtTm><Acct><Id><IBAN>%[3]s</IBAN></Id><Ccy>EUR</Ccy></Acct>`, randomHex(4), time.Now().UTC().Format(time.RFC3339), federation.CreditorIBAN)
	day := time.Now().UTC().Format(time.DateOnly)
	for i := range credits {
		ref, minor := "", int64(5000+i%97*100)
		if i%10 == 0 && i/10 < len(open) {
			ref, minor = open[i/10].RF, open[i/10].Amount
		} else {
			rf, _ := banking.CreditorReference(fmt.Sprintf("PO-NOMATCH%06d", i))
			ref = string(rf)
		}
		amount := fmt.Sprintf("%d.%02d", minor/100, minor%100)
		fmt.Fprintf(&b, `<Ntry><NtryRef>N%07d</NtryRef><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>
<BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt><AcctSvcrRef>E%07d</AcctSvcrRef><BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd></Fmly></Domn></BkTxCd><NtryDtls>
<TxDtls><Refs><AcctSvcrRef>T%07d</AcctSvcrRef><EndToEndId>E2E-%07d</EndToEndId></Refs><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><RltdPties><Dbtr><Nm>Member %d</Nm></Dbtr></RltdPties>
<RmtInf><Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>%s</Ref></CdtrRefInf></Strd></RmtInf></TxDtls></NtryDtls></Ntry>
`, i, amount, day, day, i, i, i, amount, i, ref)
	}
	b.WriteString(`</Stmt></BkToCstmrStmt></Document>`)
	file := filepath.Join(r.f.workdir, "statement.xml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		return err
	}
	orgID := strconv.FormatInt(org, 10)
	dry, _, err := r.portal("payments", "import", file, "--org", orgID, "--dry-run")
	if err != nil {
		return err
	}
	took, out, err := r.portal("payments", "import", file, "--org", orgID)
	if err != nil {
		return err
	}
	summary := ""
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) > 0 {
		summary = lines[len(lines)-1]
	}
	r.add(fmt.Sprintf("statement import: %d credits, %d matching (portal payments import)", credits, len(open)), secs(took),
		fmt.Sprintf("the same file --dry-run (read and matched, nothing captured): %s", secs(dry)), "< 10 s", took < 10*time.Second, true)
	r.note("Statement import's last line: %q.", summary)
	return nil
}

var runIDPattern = regexp.MustCompile(`run (\d+) \(`)

// collectionRun prepares the debit club's collection run, writes its file
// and marks it sent, each with the command an operator uses.
func (r *fedRun) collectionRun(ctx context.Context) error {
	var org int64
	if err := r.db.QueryRowContext(ctx, "SELECT id FROM organisations WHERE slug = ?", federation.DebitClub).Scan(&org); err != nil {
		return err
	}
	orgID := strconv.FormatInt(org, 10)
	until := time.Now().UTC().AddDate(0, 1, 0).Format(time.DateOnly)
	prepared, out, err := r.portal("debits", "collect", "--org", orgID, "--until", until)
	if err != nil {
		return err
	}
	m := runIDPattern.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("debits collect: no run in %q", out)
	}
	debits := 0
	if d := regexp.MustCompile(`: (\d+) debits`).FindStringSubmatch(out); d != nil {
		debits, _ = strconv.Atoi(d[1])
	}
	filed, _, err := r.portal("debits", "file", m[1], "--org", orgID, "--out", filepath.Join(r.f.workdir, "run.xml"))
	if err != nil {
		return err
	}
	sent, out, err := r.portal("debits", "sent", m[1], "--org", orgID)
	if err != nil {
		return err
	}
	total := prepared + filed + sent
	r.add(fmt.Sprintf("collection run: %d debits prepared + file + marked sent", debits),
		fmt.Sprintf("%s (%s + %s + %s)", secs(total), secs(prepared), secs(filed), secs(sent)),
		fmt.Sprintf("marking sent: %.2f ms a debit", 1000*sent.Seconds()/float64(max(debits, 1))), "< 10 s", total < 10*time.Second, true)
	r.note("Marking sent said: %q.", strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	return nil
}

// writeDoc replaces the generated part of the federation section of
// docs/BENCHMARKS.md (between its markers) with this run's figures.
func (r *fedRun) writeDoc() error {
	const begin, end = "<!-- bench-federation:begin -->", "<!-- bench-federation:end -->"
	raw, err := os.ReadFile(r.f.doc)
	if err != nil {
		return err
	}
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s markers", r.f.doc, begin, end)
	}
	var b strings.Builder
	b.WriteString(begin + "\n")
	goVersion := runtime.Version()
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0]); len(f) >= 2 {
			kb, _ := strconv.Atoi(f[1])
			mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	fmt.Fprintf(&b, "Run of %s UTC, %s in all: `%s`\n\n", r.started.UTC().Format("2006-01-02 15:04"), time.Since(r.started).Round(time.Second), strings.Join(os.Args, " "))
	fmt.Fprintf(&b, "Machine: %d CPUs (`nproc`), %s memory, %s, PostgreSQL on the same machine; load average %s.\n\n", runtime.NumCPU(), mem, goVersion, strings.Join(r.load, "; "))
	b.WriteString("| work | measured | reference (same run) | target | |\n|---|---|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.work, row.measured, row.reference, row.target, row.verdict)
	}
	b.WriteString("\n")
	for _, n := range r.notes {
		b.WriteString("- " + n + "\n")
	}
	b.WriteString(end)
	doc = doc[:i] + b.String() + doc[j+len(end):]
	return os.WriteFile(r.f.doc, []byte(doc), 0o644)
}
