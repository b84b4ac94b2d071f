// Package deploy_test holds the deployment examples in deploy/ and the
// container image to what docs/OPERATIONS.md#deployment promises: the image
// that make image builds runs as a cluster of two against PostgreSQL and
// Redis, stops gracefully, is small and does not run as root; the systemd
// unit passes systemd's own checks; the Kubernetes manifests parse and set
// only settings the portal reads.
package deploy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/handlers/members/formclient"
	"portal/relay/hashlink"
)

// maxImageSize is what the image may weigh: the binary is most of it
// (about 55 MB stripped); a base image or a forgotten file would show here.
const maxImageSize = 60_000_000

// podmanConf is the podman configuration the sandbox needs
// (deploy/podman/containers.conf, relative to this package).
const podmanConf = "podman/containers.conf"

// required says whether a part must run rather than skip: .ci/test-env sets
// env (PORTAL_PODMAN) to "required" when it found or installed what the part
// needs, and PORTAL_TEST_REQUIRE=all (CI) requires every part.
func required(env string) bool {
	return (env != "" && os.Getenv(env) == "required") || os.Getenv("PORTAL_TEST_REQUIRE") == "all"
}

// unavailable skips t with one line saying why, or fails it when the part
// is required: by PORTAL_TEST_REQUIRE=all, or by env when it is not empty.
func unavailable(t *testing.T, env, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if required(env) {
		by := "PORTAL_TEST_REQUIRE=all"
		if env != "" {
			by += " or " + env + "=required"
		}
		t.Fatalf("the container image test cannot run, and it is required (%s): %s", by, msg)
	}
	t.Skip("container image test SKIPPED: " + msg)
}

// podman runs podman with the sandbox's configuration.
type podman struct{ conf string }

// output runs podman with args and returns its standard output; an error
// carries its standard error.
func (p podman) output(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+p.conf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// must runs podman with args and fails t if it fails.
func (p podman) must(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := p.output(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImage builds the image with make image and runs it as operators
// would: two containers on a fresh PostgreSQL schema and the local
// Redis (sessions there), secrets read from mounted files (*_FILE), each
// on its own port. A household registers and pays on the first; the
// second serves its session and sees the persons registered. Then the
// instance holding a job (a webhook delivery the receiver keeps waiting)
// is sent SIGTERM while a slow request (relayed to a backend that keeps it
// waiting) is in flight: /readyz fails at once, the listener closes, and
// once both are let go the request is answered, the job is recorded as
// done with its lease given back, and the container exits with status 0.
// Along the way: the image's size, its non-root user (in the image and of
// the running process), its own SQLite database in /data, the CA bundle
// and the time zones built in.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("the container image test builds and runs an image (-short)")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		unavailable(t, "PORTAL_PODMAN", "podman is not installed (apt-get install podman runc, as .ci/test-env does as root)")
	}
	databaseURL, redisURL := os.Getenv("PORTAL_TEST_DATABASE_URL"), os.Getenv("PORTAL_TEST_REDIS_URL")
	if databaseURL == "" || redisURL == "" {
		// Not required by PORTAL_PODMAN: podman may well be there without them.
		unavailable(t, "", "it needs PORTAL_TEST_DATABASE_URL and PORTAL_TEST_REDIS_URL (make test sets them)")
	}
	conf, err := filepath.Abs(podmanConf)
	if err != nil {
		t.Fatal(err)
	}
	pm := podman{conf: conf}
	image := buildImage(t, pm)
	// Building needs no runtime; running does, and a sandbox may refuse it.
	probe, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := pm.output(probe, "run", "--rm", "--network", "host", image, "help"); err != nil {
		unavailable(t, "PORTAL_PODMAN", "podman cannot run containers here: %s", lastLine(err.Error()))
	}
	checkImage(t, pm, image)
	// Alone, the image keeps a SQLite database in /data, its working
	// directory, which its user may write.
	if out := pm.must(t, "run", "--rm", "--network", "host", image, "migrate", "up"); !strings.Contains(out, "applied") {
		t.Errorf("migrate up on the image's own SQLite database (/data/portal.db) says: %s", out)
	}

	db, dbURL := freshSchema(t, databaseURL)
	secrets := writeSecrets(t, map[string]string{
		"database-url": dbURL,
		"hash-secret":  "image-test-hash-secret-0123456789",
		"session-key":  randomKey(t),
		"redis-url":    redisURL,
		"api-key":      "image-test-api-key",
	})
	backend := newHeldServer(t, "/slow", "answered after the SIGTERM")
	hook := newHeldServer(t, "/hook", "")
	// The commands run in the image too, on the same database.
	commandEnv := []string{"PORTAL_DATABASE_URL_FILE=/run/secrets/database-url", "PORTAL_HASH_SECRET_FILE=/run/secrets/hash-secret",
		"PORTAL_SESSION_KEY_FILE=/run/secrets/session-key"}
	command := func(args ...string) string {
		run := []string{"run", "--rm", "--network", "host", "-v", secrets + ":/run/secrets:ro"}
		for _, e := range commandEnv {
			run = append(run, "-e", e)
		}
		return pm.must(t, append(append(run, image), args...)...)
	}
	command("migrate", "up")
	command("seed", "demo", "--members", "1")
	command("webhooks", "add", "--org", "1", "--url", hook.URL+"/hook", "--events", "payment.succeeded")

	c := &cluster{t: t, pm: pm, image: image, secrets: secrets, prefix: "portal-imagetest-" + randomHex(t, 4)}
	env := append(commandEnv, "PORTAL_REDIS_URL_FILE=/run/secrets/redis-url", "PORTAL_SESSION_STORE=redis",
		"PORTAL_API_KEY_FILE=/run/secrets/api-key", "PORTAL_ADMIN_BACKEND_URL="+backend.URL,
		"PORTAL_PAYMENT_PROVIDER=test", "PORTAL_COOKIE_SECURE=false", "PORTAL_JOB_WORKERS=1", "PORTAL_SHUTDOWN_DELAY=2s")
	a := c.start("a", env)
	b := c.start("b", append(slices.Clip(env), "TZ=Europe/Berlin"))
	a.waitReady(t)
	b.waitReady(t)
	checkNonRoot(t, pm, a)
	checkCABundle(t, pm, a)

	// A household registers and pays on a; b serves its session (from
	// Redis) and sees its persons registered (from PostgreSQL).
	m := signIn(t, a.base, "demo-1", "image-test-hash-secret-0123456789")
	registerAndPay(t, m, a.base)
	readRegistered(t, m, b.base, http.StatusCreated)
	if logs := c.logs(b); !regexp.MustCompile(`time=\S+T\S+\+0[12]:00 `).MatchString(logs) {
		t.Errorf("b runs with TZ=Europe/Berlin, yet its log's times are not in Berlin's offset (no time zone data in the image?):\n%s", firstLines(logs, 5))
	}

	// The payment's webhook delivery is a job one instance now holds.
	var delivery []byte
	select {
	case delivery = <-hook.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivery arrived within 30 s of the payment")
	}
	if !bytes.Contains(delivery, []byte(`"type":"payment.succeeded"`)) {
		t.Errorf("the delivery is not of payment.succeeded: %s", delivery)
	}
	var job struct {
		ID       int64   `bun:"id"`
		State    string  `bun:"state"`
		LockedBy *string `bun:"locked_by"`
	}
	ctx := context.Background()
	if err := db.NewRaw("SELECT id, state, locked_by FROM jobs WHERE kind = ? AND state = 'running'", engine.KindWebhookDelivery).Scan(ctx, &job); err != nil {
		t.Fatalf("the held delivery's job: %v", err)
	}
	var holder, other instance
	switch {
	case job.LockedBy != nil && strings.HasPrefix(*job.LockedBy, a.name+":"):
		holder, other = a, b
	case job.LockedBy != nil && strings.HasPrefix(*job.LockedBy, b.name+":"):
		holder, other = b, a
	default:
		t.Fatalf("the running delivery's job is leased to %v, neither instance (leases are HOSTNAME:PID/...)", job.LockedBy)
	}
	t.Logf("%s holds the delivery (job %d, lease %s)", holder.name, job.ID, *job.LockedBy)

	// A slow request to the holder, relayed to the backend, which keeps it.
	type answer struct {
		status int
		body   string
		err    error
	}
	slow := make(chan answer, 1)
	go func() {
		res, err := http.Get(holder.base + "/services/admin-service/slow")
		if err != nil {
			slow <- answer{err: err}
			return
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		slow <- answer{status: res.StatusCode, body: string(body), err: err}
	}()
	select {
	case <-backend.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow request did not reach the backend within 30 s")
	}

	pm.must(t, "kill", "--signal", "TERM", holder.container)
	stopping := time.Now()
	pollUntil(t, 10*time.Second, "/readyz to fail after SIGTERM", func() bool {
		res, err := http.Get(holder.base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusServiceUnavailable
	})
	// After PORTAL_SHUTDOWN_DELAY the server drains: no new connections.
	pollUntil(t, 30*time.Second, "the listener to close (the drain to begin)", func() bool {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(holder.base, "http://"), time.Second)
		if err == nil {
			conn.Close()
			return false
		}
		return true
	})
	select {
	case got := <-slow:
		t.Fatalf("the slow request ended before the backend answered: %+v", got)
	default:
	}
	close(backend.release)
	close(hook.release)
	select {
	case got := <-slow:
		if got.err != nil || got.status != http.StatusOK || got.body != "answered after the SIGTERM" {
			t.Errorf("the request in flight at SIGTERM: status %d, body %q, err %v; want 200 with the backend's answer", got.status, got.body, got.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request in flight at SIGTERM was not answered within 30 s of the backend's answer")
	}
	if code := c.wait(holder, time.Minute); code != "0" {
		t.Errorf("%s exited with status %s after SIGTERM, want 0", holder.name, code)
	}
	t.Logf("%s stopped %s after SIGTERM", holder.name, time.Since(stopping).Round(100*time.Millisecond))
	var after struct {
		State    string  `bun:"state"`
		LockedBy *string `bun:"locked_by"`
	}
	if err := db.NewRaw("SELECT state, locked_by FROM jobs WHERE id = ?", job.ID).Scan(ctx, &after); err != nil {
		t.Fatal(err)
	}
	if after.State != "succeeded" || after.LockedBy != nil {
		t.Errorf("the delivery %s held at SIGTERM is %s, leased to %v; want succeeded, its lease given back", holder.name, after.State, after.LockedBy)
	}
	var leased int
	if err := db.NewRaw("SELECT count(*) FROM jobs WHERE state = 'running' AND locked_by LIKE ?", holder.name+":%").Scan(ctx, &leased); err != nil {
		t.Fatal(err)
	}
	if leased != 0 {
		t.Errorf("%d job(s) still leased to %s after it stopped", leased, holder.name)
	}
	if logs := c.logs(holder); strings.Contains(logs, "jobs still running at shutdown") {
		t.Errorf("%s left jobs running at shutdown:\n%s", holder.name, logs)
	}

	// The other instance serves on, and stops as cleanly.
	other.waitReady(t)
	readRegistered(t, m, other.base, http.StatusOK)
	pm.must(t, "stop", "--time", "60", other.container)
	if code := c.wait(other, time.Minute); code != "0" {
		t.Errorf("%s exited with status %s after podman stop, want 0", other.name, code)
	}
}

// buildImage runs make image with a tag of this run's, removed afterwards.
func buildImage(t *testing.T, pm podman) string {
	t.Helper()
	image := "localhost/portal-imagetest:" + randomHex(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, "make", "-C", "..", "--no-print-directory", "image", "IMAGE="+image, "PODMAN_CONF="+pm.conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pm.output(ctx, "rmi", "--force", image)
	})
	t.Logf("make image built %s in %s", image, time.Since(start).Round(100*time.Millisecond))
	return image
}

// checkImage: small, and configured to run as the numeric non-root user.
func checkImage(t *testing.T, pm podman, image string) {
	t.Helper()
	size, err := strconv.ParseInt(pm.must(t, "image", "inspect", "--format", "{{.Size}}", image), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image size %.1f MB (at most %.0f MB)", float64(size)/1e6, float64(maxImageSize)/1e6)
	if size > maxImageSize {
		t.Errorf("the image is %d bytes, more than %d", size, maxImageSize)
	}
	if user := pm.must(t, "image", "inspect", "--format", "{{.Config.User}}", image); user != "65532:65532" {
		t.Errorf("the image's user is %q, want 65532:65532", user)
	}
}

// checkNonRoot reads the running server's ids from /proc, as the host sees
// them: no user namespace maps them to root either.
func checkNonRoot(t *testing.T, pm podman, in instance) {
	t.Helper()
	pid := pm.must(t, "inspect", "--format", "{{.State.Pid}}", in.container)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if field, ids, ok := strings.Cut(line, ":"); ok && (field == "Uid" || field == "Gid") {
			for _, id := range strings.Fields(ids) {
				if id != "65532" {
					t.Errorf("the server in %s runs with %s %s, want 65532 throughout", in.name, field, strings.Join(strings.Fields(ids), " "))
					break
				}
			}
		}
	}
}

// checkCABundle copies the CA bundle out of the running container: it is
// where Go looks for it and holds certificates.
func checkCABundle(t *testing.T, pm podman, in instance) {
	t.Helper()
	dir := t.TempDir()
	pm.must(t, "cp", in.container+":/etc/ssl/certs/ca-certificates.crt", dir)
	pem, err := os.ReadFile(filepath.Join(dir, "ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Error("the image's /etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
}

// freshSchema creates a schema of this test's in the database of base (as
// dbtest gives every PostgreSQL test one), dropped afterwards, and returns
// a connection to it and the URL that uses it. A schema rather than a
// database of its own: dropping a database waits for a checkpoint, seconds
// on a busy machine, and a schema separates the test as well.
func freshSchema(t *testing.T, base string) (*bun.DB, string) {
	t.Helper()
	admin, err := engine.OpenDB(base)
	if err != nil {
		t.Fatal(err)
	}
	name := "portal_imagetest_" + randomHex(t, 4)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	db, err := engine.OpenDB(u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
		admin.Close()
	})
	return db, u.String()
}

// writeSecrets writes each secret to a file of its name in a directory the
// containers mount at /run/secrets; readable by the image's user.
func writeSecrets(t *testing.T, secrets map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, value := range secrets {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// heldServer is a server on the host (the containers share its network)
// that answers its path only when the test closes release; arrived gets
// each such request's body.
type heldServer struct {
	*httptest.Server
	arrived chan []byte
	release chan struct{}
}

// newHeldServer holds requests to path, then answers 200 with answer. As
// the admin backend it also answers the hash login with a token.
func newHeldServer(t *testing.T, path, answer string) *heldServer {
	h := &heldServer{arrived: make(chan []byte, 8), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/auth/external-login":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"token":"image-test-backend-token"}`)
		case path:
			h.arrived <- body
			select {
			case <-h.release:
				io.WriteString(w, answer)
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.Close()
	})
	return h
}

// cluster starts the test's containers and removes them afterwards,
// showing their logs when the test failed.
type cluster struct {
	t       *testing.T
	pm      podman
	image   string
	secrets string
	prefix  string
}

// instance is one running container: its host name names it in job leases.
type instance struct {
	name, container, base string
}

func (c *cluster) start(name string, env []string) instance {
	t := c.t
	t.Helper()
	addr := freeAddr(t)
	in := instance{name: "portal-" + name, container: c.prefix + "-" + name, base: "http://" + addr}
	args := []string{"run", "--detach", "--name", in.container, "--hostname", in.name, "--network", "host",
		"-v", c.secrets + ":/run/secrets:ro", "-e", "PORTAL_ADDR=" + addr, "-e", "PORTAL_BASE_URL=" + in.base}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	c.pm.must(t, append(args, c.image)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of %s:\n%s", in.name, c.logs(in))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c.pm.output(ctx, "rm", "--force", "--volumes", "--time", "5", in.container)
	})
	return in
}

// logs is what the container wrote (the server logs to standard error).
func (c *cluster) logs(in instance) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", "logs", in.container)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+c.pm.conf)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// wait waits for the container to exit and returns its exit status.
func (c *cluster) wait(in instance, within time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	code, err := c.pm.output(ctx, "wait", in.container)
	if err != nil {
		c.t.Fatalf("%s did not exit within %s: %v", in.name, within, err)
	}
	return code
}

// waitReady polls /readyz until it answers 200.
func (in instance) waitReady(t *testing.T) {
	t.Helper()
	pollUntil(t, time.Minute, in.name+"'s /readyz to answer 200", func() bool {
		res, err := http.Get(in.base + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// pollUntil checks cond every 50 ms until it holds, failing t after within.
func pollUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// member is a household's client: its session cookie goes to either
// instance (both on 127.0.0.1).
type member struct {
	client *http.Client
	key    string
}

func signIn(t *testing.T, base, key, secret string) *member {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	m := &member{key: key, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	m.call(t, http.MethodPost, base+"/api/auth/external-login", map[string]string{"userKey": key, "hash": hashlink.Sign(secret, key)}, http.StatusOK)
	return m
}

// call sends body as JSON (none when nil) and wants the status want.
func (m *member) call(t *testing.T, method, url string, body any, want int) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := m.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, res.StatusCode, want, raw)
	}
	return raw
}

// registerAndPay takes the household through the demo's form on the JSON
// API and pays at the test gateway, as the member's browser would.
func registerAndPay(t *testing.T, m *member, base string) {
	t.Helper()
	var f formclient.Form
	if err := json.Unmarshal(m.call(t, http.MethodGet, base+"/api/forms/membership/1?userKey="+url.QueryEscape(m.key), nil, http.StatusCreated), &f); err != nil {
		t.Fatal(err)
	}
	var people []map[string]any
	for _, p := range f.People {
		if p.CanSelect {
			people = append(people, map[string]any{"id": p.ID, "selected": true})
		}
	}
	if len(people) == 0 {
		t.Fatalf("%s has no person to select: %+v", m.key, f)
	}
	for steps := 0; f.ProcessState != "DONE"; steps++ {
		if steps > 50 {
			t.Fatal("the form did not finish within 50 steps")
		}
		body := map[string]any{"processId": f.ProcessID, "step": f.Step, "people": people}
		if err := json.Unmarshal(m.call(t, http.MethodPost, base+"/api/forms/next", body, http.StatusOK), &f); err != nil {
			t.Fatal(err)
		}
		people = nil
		for i, p := range f.People {
			if !p.Hide && f.QuestionType != nil {
				people = append(people, map[string]any{"id": p.ID, "answer": formclient.DemoAnswer(f, i)})
			}
		}
	}
	if f.PaymentURL == nil {
		t.Fatal("the committed registration has no payment URL")
	}
	// The stable pay link redirects to the test gateway's page, whose form
	// decides the payment and redirects to the return, which confirms it.
	pay, err := url.Parse(*f.PaymentURL)
	if err != nil {
		t.Fatal(err)
	}
	checkout := m.redirect(t, http.MethodGet, base+pay.RequestURI(), nil)
	ret := m.redirect(t, http.MethodPost, base+checkout.Path, url.Values{"status": {"success"}})
	if page := m.call(t, http.MethodGet, base+ret.RequestURI(), nil, http.StatusOK); !bytes.Contains(page, []byte("registration complete")) {
		t.Fatalf("the payment return does not confirm the registration:\n%s", firstLines(string(page), 40))
	}
}

// redirect sends a request (a form when form is not nil) and returns where
// its 303 points.
func (m *member) redirect(t *testing.T, method, target string, form url.Values) *url.URL {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := m.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("%s %s: status %d, Location %q; want 303", method, target, res.StatusCode, res.Header.Get("Location"))
	}
	return loc
}

// readRegistered loads the household's form on base with its session: a
// paid registration is finished, so a new one starts (201; 200 when an
// earlier read started it) in which every person shows Registered.
func readRegistered(t *testing.T, m *member, base string, want int) {
	t.Helper()
	var f formclient.Form
	if err := json.Unmarshal(m.call(t, http.MethodGet, base+"/api/forms/membership/1?userKey="+url.QueryEscape(m.key), nil, want), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.People) == 0 {
		t.Fatalf("%s: the household has no persons", base)
	}
	for _, p := range f.People {
		if p.Status != "Registered" {
			t.Errorf("%s: person %d is %q after the payment, want Registered", base, p.ID, p.Status)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// randomKey is a session key as PORTAL_SESSION_KEY takes it.
func randomKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
