package main

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"portal/engine/dbtest"
	"portal/handlers/members/formclient"
	"portal/handlers/server"
)

// previousRelease is the commit of the release before this one that the
// upgrade test starts from: v0.3.0 (CHANGELOG.md), OpenAPI 2.0.0, before
// the books' time zone, sessions by organisation and person-id
// migrations. A commit, not the tag: CI's clones may carry no tags. Move
// it forward at a release.
const previousRelease = "b853a3f"

// TestUpgradeFromPreviousRelease builds the previous release from its
// commit, fills a database with it (the demo, three households through its
// JSON API: one paid at the test gateway, one committed unpaid, one
// started), stops it, and upgrades to this build: `migrate up`, then
// serve. Nothing is lost: every table of the old schema keeps its rows,
// the registrations are read back through this build's API in their
// states, and the unpaid order's pay link still opens its checkout. On
// SQLite, and on PostgreSQL when it is there. Skipped, in one line, where
// the clone lacks the commit (a shallow clone), even under
// PORTAL_TEST_REQUIRE=all.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	old := buildRelease(t, previousRelease)
	t.Run("sqlite", func(t *testing.T) {
		upgradeFrom(t, old, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		dbtest.SkipWithoutPostgres(t)
		upgradeFrom(t, old, postgresURL(t))
	})
}

// buildRelease builds cmd/portal of commit, taken from this clone with git
// archive, without cgo as releases are built, into the test's folder; the
// Go build cache is the one every build here shares.
func buildRelease(t *testing.T, commit string) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		requireOrSkip(t, "the upgrade test needs git and this repository's history: %v", err)
	}
	repo := strings.TrimSpace(string(root))
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		// Not a failure even in CI: a shallow clone is how the repository
		// was fetched, not a part of this machine that is missing.
		t.Skipf("the upgrade test was skipped: commit %s (the previous release) is not in this clone; fetch the whole history (git fetch --unshallow)", commit)
	}
	// The binary is kept in the user's cache by commit: a commit's build
	// never changes, and the test costs its build once per machine.
	cache, err := os.UserCacheDir()
	if err == nil {
		cache = filepath.Join(cache, "portal-test")
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil { // no cache of the user's: this run's own folder
		cache = t.TempDir()
	}
	bin := filepath.Join(cache, "portal-"+commit)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	// A folder of its own per commit, the same on every run: the build
	// cache keys a package by its folder, and the release's dependencies
	// (in the module cache) are shared with this build's `make build`.
	src := filepath.Join(filepath.Dir(bin), "src-"+commit)
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("git", "-C", repo, "archive", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar: %v", err)
	}
	built := filepath.Join(t.TempDir(), "portal-"+commit)
	start := time.Now()
	build := exec.Command("go", "build", "-o", built, "./cmd/portal")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", commit, err, out)
	}
	t.Logf("built the previous release %s in %s", commit, time.Since(start).Round(time.Second))
	if err := os.Rename(built, bin); err != nil { // whole or not at all
		t.Fatal(err)
	}
	os.RemoveAll(src)
	return bin
}

// requireOrSkip skips the test with its reason, or fails it under
// PORTAL_TEST_REQUIRE=all (CI), where nothing may be skipped.
func requireOrSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("PORTAL_TEST_REQUIRE") == "all" {
		t.Fatalf(format+" (required by PORTAL_TEST_REQUIRE=all)", args...)
	}
	t.Skipf(format, args...)
}

const upgradeHashSecret = "upgrade-hash-secret-0123456789"

func upgradeFrom(t *testing.T, old, databaseURL string) {
	environ := append(os.Environ(), "PORTAL_DATABASE_URL="+databaseURL, "PORTAL_HASH_SECRET="+upgradeHashSecret,
		"PORTAL_PAYMENT_PROVIDER=test", "PORTAL_COOKIE_SECURE=false", "PORTAL_ADDR=127.0.0.1:0", "PORTAL_BASE_URL=http://127.0.0.1")
	seed := exec.Command(old, "seed", "demo", "--members", "3")
	seed.Env = environ
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("the previous release's seed: %v\n%s", err, out)
	}

	// The previous release serves; three households register through it.
	var logs syncBuffer
	serve := exec.Command(old, "serve")
	serve.Env, serve.Stdout, serve.Stderr = environ, &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		serve.Process.Signal(os.Interrupt)
		if err := serve.Wait(); err != nil {
			t.Errorf("the previous release's serve: %v\n%s", err, logs.String())
		}
	}
	t.Cleanup(stop)
	base := "http://" + waitMatch(t, &logs, regexp.MustCompile(`msg="portal listening" addr=(\S+)`))[1]
	payer, paid := registerThroughAPI(t, base, "demo-1", -1)
	_, unpaid := registerThroughAPI(t, base, "demo-2", -1)
	registerThroughAPI(t, base, "demo-3", 1)
	payer.payAtTestGateway(t, paid)
	stop()

	before := tableCounts(t, databaseURL)
	before["states"] = len(registrationStatuses(t, databaseURL, "user_key"))
	wantStates := registrationStatuses(t, databaseURL, "user_key")

	// This build: migrate, then serve.
	getenv := env("PORTAL_DATABASE_URL", databaseURL, "PORTAL_HASH_SECRET", upgradeHashSecret, "PORTAL_BASE_URL", "http://127.0.0.1")
	if out, err := runCmd(t, getenv, "migrate", "up"); err != nil || !strings.Contains(out, "applied") {
		t.Fatalf("migrate up after the previous release: %v\n%s", err, out)
	}
	after := tableCounts(t, databaseURL)
	for table, n := range before {
		if table != "states" && table != "bun_migrations" && after[table] != n {
			t.Errorf("%s: %d rows after the upgrade's migrations, %d before", table, after[table], n)
		}
	}
	if got := registrationStatuses(t, databaseURL, "user_key"); got != wantStates {
		t.Errorf("registrations after the upgrade: %s, before: %s", got, wantStates)
	}
	if wantStates != "COMPLETED DONE RUNNING" {
		t.Errorf("the previous release registered %s, want COMPLETED DONE RUNNING (demo-1 paid, demo-2 unpaid, demo-3 started)", wantStates)
	}
	base, stopNew := serveFile(t, getenv)
	defer stopNew()
	// Read back by the members: demo-1's persons are registered (a new
	// registration offers nothing to select), demo-2's registration waits
	// for its payment, demo-3's goes on where it stopped.
	for key, want := range map[string]string{"demo-1": "INIT Registered", "demo-2": "DONE", "demo-3": "RUNNING"} {
		m := signInMember(t, base, key)
		res := m.do(t, http.MethodGet, "/api/forms/membership/1?userKey="+url.QueryEscape(key), nil)
		var f formclient.Form
		err := json.NewDecoder(res.Body).Decode(&f)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK && res.StatusCode != http.StatusCreated {
			t.Fatalf("%s's registration: %d %v", key, res.StatusCode, err)
		}
		got := f.ProcessState
		if f.ProcessState == "INIT" {
			for _, p := range f.People {
				got += " " + p.Status
			}
			got = strings.Join(strings.Fields(got)[:2], " ")
		}
		if got != want || f.ProcessState == "DONE" && f.PaymentURL == nil {
			t.Errorf("%s's registration read by this build: %s, want %s", key, got, want)
		}
	}
	// And by the club: this build's admin API exports both committed households.
	key, _, err := runSplit(t, getenv, "apikeys", "create", "--org", "1", "--scope", "read", "--name", "upgrade")
	if err != nil {
		t.Fatal(err)
	}
	export := exports(t, base, strings.TrimSpace(key))
	for _, name := range []string{"Tester 1 A", "Tester 1 B", "Tester 2 A"} {
		if !strings.Contains(export, name) {
			t.Errorf("this build's export does not name %s:\n%s", name, export)
		}
	}
	res := signInMember(t, base, "demo-2").do(t, http.MethodGet, unpaid, nil)
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), server.TestGatewayPayPrefix) {
		t.Errorf("the unpaid order's pay link made by the previous release: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// apiMember is a member signed in to the JSON API with their hash.
type apiMember struct {
	base   string
	client *http.Client
}

// signInMember signs key in with POST /api/auth/external-login, which
// every release has: the hash is md5(secret + user key).
func signInMember(t *testing.T, base, key string) *apiMember {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	m := &apiMember{base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	sum := md5.Sum([]byte(upgradeHashSecret + key))
	res := m.do(t, http.MethodPost, "/api/auth/external-login", map[string]string{"userKey": key, "hash": hex.EncodeToString(sum[:])})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign-in of %s: %d", key, res.StatusCode)
	}
	return m
}

func (m *apiMember) do(t *testing.T, method, path string, body any) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, m.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := m.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res
}

func (m *apiMember) form(t *testing.T, method, path string, body any, want int) formclient.Form {
	t.Helper()
	res := m.do(t, method, path, body)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, res.StatusCode, want, raw)
	}
	var f formclient.Form
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, raw)
	}
	return f
}

// registerThroughAPI registers every person key may select for the demo
// period through the JSON API, answering steps steps (-1: to the commit),
// and returns the member and the pay link of a committed registration.
func registerThroughAPI(t *testing.T, base, key string, steps int) (m *apiMember, payLink string) {
	t.Helper()
	m = signInMember(t, base, key)
	f := m.form(t, http.MethodGet, "/api/forms/membership/1?userKey="+url.QueryEscape(key), nil, http.StatusCreated)
	var people []map[string]any
	for _, p := range f.People {
		if p.CanSelect {
			people = append(people, map[string]any{"id": p.ID})
		}
	}
	for n := 0; f.ProcessState != "DONE" && n != steps; n++ {
		f = m.form(t, http.MethodPost, "/api/forms/next", map[string]any{"processId": f.ProcessID, "step": f.Step, "people": people}, http.StatusOK)
		people = nil
		for i, p := range f.People {
			if !p.Hide && f.QuestionType != nil {
				people = append(people, map[string]any{"id": p.ID, "answer": formclient.DemoAnswer(f, i)})
			}
		}
	}
	if f.PaymentURL == nil {
		return m, ""
	}
	u, err := url.Parse(*f.PaymentURL)
	if err != nil {
		t.Fatal(err)
	}
	return m, u.RequestURI()
}

// payAtTestGateway follows a pay link to the test gateway, pays there and
// comes back, as a member's browser does.
func (m *apiMember) payAtTestGateway(t *testing.T, payLink string) {
	t.Helper()
	res := m.do(t, http.MethodGet, payLink, nil)
	res.Body.Close()
	checkout, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay link %s: %d %v", payLink, res.StatusCode, err)
	}
	req, _ := http.NewRequest(http.MethodPost, m.base+checkout.Path, strings.NewReader("status=success"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err = m.client.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the test gateway: %d %v", res.StatusCode, err)
	}
	res = m.do(t, http.MethodGet, back.RequestURI(), nil)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the payment return: %d\n%s", res.StatusCode, body)
	}
}
