package main

import (
	"fmt"
	"net/http"
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
	// CPU seconds the portal and PostgreSQL (0 on SQLite) used during the loop.
	portalCPU, databaseCPU float64
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
		wg      sync.WaitGroup
	)
	ready := make(chan struct{})
	var signedIn sync.WaitGroup
	for i := range o.members {
		wg.Add(1)
		signedIn.Add(1)
		go func() {
			defer wg.Done()
			m, f, people, err := signIn(base, fmt.Sprintf("demo-%d", firstKey+1+i))
			selection := people
			signedIn.Done()
			<-ready
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
		}()
	}
	signedIn.Wait()
	portalCPU, databaseCPU := cpuSeconds(serverPID, ""), cpuSeconds(0, "postgres")
	start := time.Now()
	close(ready)
	wg.Wait()
	res.elapsed = time.Since(start)
	res.portalCPU, res.databaseCPU = cpuSeconds(serverPID, "")-portalCPU, cpuSeconds(0, "postgres")-databaseCPU
	return res, failure
}

// cpuSeconds is the CPU time (user and system) used so far by the process
// pid, or, with pid 0, by every process named comm (PostgreSQL's backends):
// where the step loop's time goes, the portal or the database.
func cpuSeconds(pid int, comm string) float64 {
	ticks := func(p string) float64 {
		raw, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			return 0
		}
		// The command name is in parentheses and may hold spaces; the
		// fields after it are numbered from the state (field 3).
		s := string(raw)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			return 0
		}
		if comm != "" && s[open+1:closing] != comm {
			return 0
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 13 {
			return 0
		}
		user, _ := strconv.ParseFloat(f[11], 64)
		system, _ := strconv.ParseFloat(f[12], 64)
		return user + system
	}
	const hz = 100 // USER_HZ, 100 on Linux
	if pid != 0 {
		return ticks(strconv.Itoa(pid)) / hz
	}
	entries, _ := os.ReadDir("/proc")
	var total float64
	for _, e := range entries {
		if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
			total += ticks(e.Name())
		}
	}
	return total / hz
}
