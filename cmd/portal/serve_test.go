package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"portal/cmd/portal/config"
	"portal/relay/session"
)

// syncBuffer is an io.Writer the server writes to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitMatch polls s until re matches, for up to a minute: serve migrates
// its database first, which takes seconds on a loaded machine under -race.
func waitMatch(t *testing.T, s *syncBuffer, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no %s in:\n%s", re, s.String())
	return nil
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// A shutdown fails /readyz at once, keeps serving through the delay, lets
// a relayed request in flight finish, and /metrics lives on its own
// listener when PORTAL_METRICS_ADDR is set.
func TestServeShutdownAndMetricsAddress(t *testing.T) {
	arrived := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived <- struct{}{}
			time.Sleep(1500 * time.Millisecond)
		}
		io.WriteString(w, "done")
	}))
	defer backend.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	getenv := env("PORTAL_DATABASE_URL", "sqlite:"+filepath.Join(t.TempDir(), "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef",
		"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false", "PORTAL_ADDR", "127.0.0.1:0",
		"PORTAL_ADMIN_BACKEND_URL", backend.URL, "PORTAL_API_KEY", "k", "PORTAL_SESSION_KEY", session.GenerateKey(),
		"PORTAL_METRICS_ADDR", "127.0.0.1:0", "PORTAL_SHUTDOWN_DELAY", "1s")
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s", stderr.String())
			select {
			case err := <-done:
				t.Logf("serve returned %v", err)
			default:
			}
		}
	})
	base := "http://" + waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))[1]
	metrics := "http://" + waitMatch(t, &stderr, regexp.MustCompile(`msg="metrics listening" addr=(\S+)`))[1]

	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz before shutdown: %d", status)
	}
	if status, _ := get(t, base+"/metrics"); status != http.StatusNotFound {
		t.Fatalf("/metrics on the public address: %d, want 404 when PORTAL_METRICS_ADDR is set", status)
	}
	if status, body := get(t, metrics+"/metrics"); status != http.StatusOK || !strings.Contains(body, "portal_http_requests_total") {
		t.Fatalf("/metrics on its own address: %d %.200s", status, body)
	}

	relayed := make(chan string, 1)
	go func() {
		status, body := get(t, base+"/services/admin-service/slow")
		relayed <- http.StatusText(status) + " " + body
	}()
	<-arrived
	cancel()
	var readyz int
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if readyz, _ = get(t, base+"/readyz"); readyz == http.StatusServiceUnavailable {
			break
		}
	}
	if readyz != http.StatusServiceUnavailable {
		t.Fatalf("readyz during shutdown: %d, want 503", readyz)
	}
	if got := <-relayed; got != "OK done" {
		t.Fatalf("the relayed request in flight got %q", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
}

// The write timeout and the shutdown grace outlast the relay's own
// timeouts, whatever they are configured to.
func TestServeTimeoutsOutlastTheRelay(t *testing.T) {
	for _, tc := range []struct{ connect, response string }{{"5s", "30s"}, {"10s", "2m"}, {"1s", "1s"}} {
		c, err := time.ParseDuration(tc.connect)
		if err != nil {
			t.Fatal(err)
		}
		r, err := time.ParseDuration(tc.response)
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Default()
		cfg.RelayConnectTimeout, cfg.RelayResponseTimeout = c, r
		write, grace := serveTimeouts(cfg)
		if write < c+r+15*time.Second || grace < c+r+15*time.Second {
			t.Errorf("connect %s, response %s: write timeout %s, grace %s", tc.connect, tc.response, write, grace)
		}
		if write < 60*time.Second || grace < 15*time.Second {
			t.Errorf("below the floors: write %s, grace %s", write, grace)
		}
	}
}

// serve's server speaks HTTP/1.1 and, for a proxy in front that uses it,
// HTTP/2 without TLS (h2c with prior knowledge).
func TestServerSpeaksH2C(t *testing.T) {
	srv := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }), time.Minute)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	for _, tc := range []struct {
		name   string
		client *http.Client
		want   string
	}{
		{"HTTP/1.1", &http.Client{Transport: &http.Transport{}}, "HTTP/1.1"},
		{"h2c", &http.Client{Transport: &http.Transport{Protocols: h2c}}, "HTTP/2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.client.Get("http://" + ln.Addr().String() + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.Proto != tc.want || string(body) != tc.want {
				t.Fatalf("answered over %s (server saw %q), want %s", res.Proto, body, tc.want)
			}
		})
	}
}

// One process serves a SQLite file: serve holds the file's lock for its
// life, a second serve and a migration on the same file are refused while
// it runs, and the lock is free again once it stopped. With the lock the
// session cache is on, coherent in process.
func TestServeHoldsTheSQLiteLock(t *testing.T) {
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "p.db")
	getenv := env("PORTAL_DATABASE_URL", dbURL, "PORTAL_HASH_SECRET", "0123456789abcdef",
		"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false", "PORTAL_ADDR", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
	waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))
	waitMatch(t, &stderr, regexp.MustCompile(`msg="session cache on" ttl=5s coherence="in process`))

	for _, cmd := range [][]string{{"serve"}, {"migrate", "up"}} {
		out, err := runCmd(t, getenv, cmd...)
		if !errors.Is(err, errSQLiteInUse) || !strings.Contains(err.Error(), "p.db.lock") {
			t.Fatalf("%s while serve runs: %v\n%s", cmd, err, out)
		}
	}
	// The same file spelt otherwise, as SQLite reads its URI: the same lock.
	dir := strings.TrimSuffix(strings.TrimPrefix(dbURL, "sqlite:"), "/p.db")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"sqlite:" + dir + "/p%2Edb", "sqlite:" + dir + "/./p.db#x", "sqlite:" + link + "/p.db"} {
		_, err := runCmd(t, env("PORTAL_DATABASE_URL", other, "PORTAL_HASH_SECRET", "0123456789abcdef"), "migrate", "up")
		if !errors.Is(err, errSQLiteInUse) {
			t.Fatalf("migrate on %s while serve runs: %v, want the lock refused", other, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	if out, err := runCmd(t, getenv, "migrate", "status"); err != nil {
		t.Fatalf("migrate after serve stopped: %v\n%s", err, out)
	}
}

// serve wires the configured payment provider: with Stripe the webhook
// route is mounted (and refuses an unsigned event); with the test gateway
// it is not. The test gateway's pages exist only on a development portal
// (an http loopback base URL), where organisations may choose it too.
func TestServePaymentProviderWiring(t *testing.T) {
	for _, tc := range []struct {
		name            string
		env             []string
		webhook, devPay int
	}{
		{"stripe", []string{"PORTAL_PAYMENT_PROVIDER", "stripe", "PORTAL_STRIPE_SECRET_KEY", "sk_test_1", "PORTAL_STRIPE_WEBHOOK_SECRET", "whsec_1",
			"PORTAL_STRIPE_API_URL", "http://127.0.0.1:1"}, http.StatusBadRequest, http.StatusUnauthorized},
		{"stripe, public address", []string{"PORTAL_PAYMENT_PROVIDER", "stripe", "PORTAL_STRIPE_SECRET_KEY", "sk_test_1", "PORTAL_STRIPE_WEBHOOK_SECRET", "whsec_1",
			"PORTAL_STRIPE_API_URL", "http://127.0.0.1:1", "PORTAL_BASE_URL", "https://portal.example"}, http.StatusBadRequest, http.StatusNotFound},
		{"test gateway", []string{"PORTAL_PAYMENT_PROVIDER", "test", "PORTAL_COOKIE_SECURE", "false"}, http.StatusNotFound, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var stdout, stderr syncBuffer
			getenv := env(append([]string{"PORTAL_DATABASE_URL", "sqlite:" + filepath.Join(t.TempDir(), "p.db"), "PORTAL_HASH_SECRET", "0123456789abcdef",
				"PORTAL_ADDR", "127.0.0.1:0"}, tc.env...)...)
			done := make(chan error, 1)
			go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve: %v\n%s", err, stderr.String())
				}
			})
			base := "http://" + waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))[1]
			res, err := http.Post(base+"/webhooks/stripe", "application/json", strings.NewReader(`{"id":"evt_1","type":"checkout.session.completed"}`))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.webhook {
				t.Errorf("POST /webhooks/stripe unsigned: %d, want %d", res.StatusCode, tc.webhook)
			}
			if status, _ := get(t, base+"/dev/pay/PR-X"); status != tc.devPay {
				t.Errorf("GET /dev/pay/PR-X: %d, want %d", status, tc.devPay)
			}
		})
	}
}
