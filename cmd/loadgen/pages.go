package main

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// pageLoads signs in o.members fresh members (the user keys after the
// flows'), selects their persons, then has each load its first question
// page (GET /membership/register/1/step/1, the server-rendered page) in a
// closed loop for o.pages. It returns every page load's latency.
func pageLoads(base string, firstKey int, o options) ([]time.Duration, error) {
	var (
		mu      sync.Mutex
		all     []time.Duration
		failure error
	)
	inStep(o.members, func() {}, func(i int, ready func()) {
		m, err := startedMember(base, fmt.Sprintf("demo-%d", firstKey+1+i))
		ready()
		var mine []time.Duration
		if err == nil {
			deadline := time.Now().Add(o.pages)
			for time.Now().Before(deadline) {
				var took time.Duration
				if _, _, took, err = m.call(http.MethodGet, "/membership/register/1/step/1", nil, 200); err != nil {
					break
				}
				mine = append(mine, took)
			}
		}
		mu.Lock()
		all = append(all, mine...)
		if err != nil && failure == nil {
			failure = err
		}
		mu.Unlock()
	})
	return all, failure
}

// startedMember signs key in and selects its persons, so that its
// registration stands at the first question.
func startedMember(base, key string) (*member, error) {
	m, f, people, err := signIn(base, key)
	if err != nil {
		return nil, err
	}
	if _, _, _, err := m.call(http.MethodPost, "/api/forms/next", map[string]any{"processId": f.ProcessID, "step": f.Step, "people": people}, 200); err != nil {
		return nil, err
	}
	return m, nil
}
