package gateway_test

import (
	"testing"
	"time"
)

// waitFor polls cond until it holds or a few seconds pass: the access log
// and the metrics are written after the client has its answer.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
