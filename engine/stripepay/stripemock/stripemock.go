// Package stripemock starts a stripe-mock process (Stripe's stateless mock
// of its API) for tests, on loopback ports of its own.
//
// The binary is PORTAL_STRIPE_MOCK_BIN, else bin/tools/stripe-mock-<version>
// of the repository (make stripe-mock installs it), else stripe-mock on
// PATH. Without one the test is skipped with a message saying how to get
// it, unless PORTAL_STRIPE_MOCK=required (as in CI), which fails it.
package stripemock

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Version is the stripe-mock release the tests are written against.
const Version = "v0.203.0"

// Key is an API key stripe-mock accepts.
const Key = "sk_test_123"

// binary finds the stripe-mock executable, or "".
func binary() string {
	if p := os.Getenv("PORTAL_STRIPE_MOCK_BIN"); p != "" {
		return p
	}
	if dir, err := os.Getwd(); err == nil {
		for ; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, "bin", "tools", "stripe-mock-"+Version)
				if _, err := os.Stat(p); err == nil {
					return p
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p
	}
	return ""
}

// freePort asks the kernel for a free loopback port.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stripe-mock: no free port: %v", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// Start runs stripe-mock for the test's duration and returns its http address.
func Start(t testing.TB) string {
	t.Helper()
	bin := binary()
	if bin == "" {
		msg := "stripe-mock " + Version + " not found: run make stripe-mock (or set PORTAL_STRIPE_MOCK_BIN)"
		if os.Getenv("PORTAL_STRIPE_MOCK") == "required" {
			t.Fatal(msg + "; PORTAL_STRIPE_MOCK=required")
		}
		t.Skip(msg + "; the Stripe suites SKIPPED")
	}
	httpAddr, httpsAddr := "127.0.0.1:"+freePort(t), "127.0.0.1:"+freePort(t)
	cmd := exec.Command(bin, "-http-addr", httpAddr, "-https-addr", httpsAddr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start stripe-mock: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://" + httpAddr
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		req.Header.Set("Authorization", "Bearer "+Key)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock did not answer on %s: %v", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
