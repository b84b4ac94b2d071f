package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stepLoopResult is the step phase: members doing nothing but answering
// question steps in a closed loop.
type stepLoopResult struct {
	elapsed time.Duration
	nexts   []sample
	resets  int
	// CPU seconds the portal, PostgreSQL (0 on SQLite) and this load
	// generator used during the loop: they share the machine's cores.
	portalCPU, databaseCPU, clientCPU float64
}

// stepLoop signs in o.members fresh members (user keys from firstKey+1),
// selects their persons, then has each answer question after question in a
// closed loop for o.steps: POST /api/forms/next on every question up to the
// one before the committing step (lastStep), then POST .../reset and the
// person selection (itself a next) to start over. It measures what the
// reference measures, a step written by 32 members at once, without the
// sign-in, form load and payment that the flows phase counts against next.
func stepLoop(base string, serverPID, firstKey, lastStep int, o options) (stepLoopResult, error) {
	var (
		mu      sync.Mutex
		res     stepLoopResult
		failure error
	)
	var portalBefore, databaseBefore, clientBefore float64
	res.elapsed = inStep(o.members, func() {
		portalBefore, databaseBefore, clientBefore = processCPU(serverPID), databaseCPU(o), processCPU(os.Getpid())
	}, func(i int, ready func()) {
		m, f, people, err := signIn(base, fmt.Sprintf("demo-%d", firstKey+1+i))
		selection := people
		ready()
		var mine []sample
		resets := 0
		if err == nil {
			deadline := time.Now().Add(o.steps)
			for time.Now().Before(deadline) {
				if f.Step >= lastStep {
					if _, _, _, err = m.call(http.MethodPost, "/api/forms/processes/"+f.ProcessID+"/reset", map[string]any{}, 200); err != nil {
						break
					}
					resets++
					f.Step, people = 0, selection
				}
				var s sample
				if f, s, err = m.next(f, people); err != nil {
					break
				}
				mine = append(mine, s)
				people = answersTo(f)
			}
		}
		mu.Lock()
		res.nexts = append(res.nexts, mine...)
		res.resets += resets
		if err != nil && failure == nil {
			failure = err
		}
		mu.Unlock()
	})
	res.portalCPU, res.databaseCPU = processCPU(serverPID)-portalBefore, databaseCPU(o)-databaseBefore
	res.clientCPU = processCPU(os.Getpid()) - clientBefore
	return res, failure
}

// inStep runs member(i, ready) for n members at once. Each calls ready
// once signed in; none goes on until all have, so that sign-in is never
// measured and the loops start together. atStart runs at that moment; it
// returns the time from then until the last member is done.
func inStep(n int, atStart func(), member func(i int, ready func())) time.Duration {
	var signedIn, done sync.WaitGroup
	release := make(chan struct{})
	for i := range n {
		signedIn.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			member(i, func() { signedIn.Done(); <-release })
		}()
	}
	signedIn.Wait()
	atStart()
	start := time.Now()
	close(release)
	done.Wait()
	return time.Since(start)
}

// processCPU is the CPU time (user and system) used so far by process pid.
func processCPU(pid int) float64 {
	return cpuOf(strconv.Itoa(pid), func(string) bool { return true })
}

// databaseCPU is the CPU time used so far by the PostgreSQL backends of
// database (their title is "postgres: user database client state"), so that
// other databases' work on the machine is not counted; 0 on SQLite.
func databaseCPU(o options) float64 {
	if o.sqlite {
		return 0
	}
	u, err := url.Parse(o.databaseURL)
	if err != nil {
		return 0
	}
	name := " " + strings.TrimPrefix(u.Path, "/") + " "
	entries, _ := os.ReadDir("/proc")
	var total float64
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		total += cpuOf(e.Name(), func(title string) bool {
			return strings.HasPrefix(title, "postgres: ") && strings.Contains(title, name)
		})
	}
	return total
}

// cpuOf reads the CPU time of process pid from /proc if its title (the
// command line) is one the caller wants.
func cpuOf(pid string, want func(title string) bool) float64 {
	title, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil || !want(strings.TrimRight(strings.ReplaceAll(string(title), "\x00", " "), " ")) {
		return 0
	}
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces) are numbered from the state, field 3; utime and stime are
	// fields 14 and 15, in clock ticks of USER_HZ (100 on Linux).
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseFloat(f[11], 64)
	system, _ := strconv.ParseFloat(f[12], 64)
	return (user + system) / 100
}
