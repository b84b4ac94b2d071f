package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/payproviders"
	"portal/handlers/server"
	"portal/relay/devidp"
	"portal/relay/session"
)

// runSplit runs a command through the entry point and returns its standard
// output apart from its standard error (apikeys create prints the key alone
// on standard output).
func runSplit(t *testing.T, getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// Operators work beside a serving portal, on its SQLite file as on
// PostgreSQL: while serve holds the SQLite file, every command that changes
// what the server decides on runs (none is refused for the lock, none fails
// with SQLITE_BUSY), and what it changed reaches the server as a change
// made on another instance reaches it on PostgreSQL: a revoked API key and
// a removed staff member are refused at their very next request,
// organisation settings apply within the resolver's refresh. On SQLite only
// migrate up and down refuse.
func TestOperatorCommandsBesideServe(t *testing.T) {
	// The two databases' runs wait out the same refreshes side by side.
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		operatorCommandsBesideServe(t, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dbtest.SkipWithoutPostgres(t)
		operatorCommandsBesideServe(t, postgresURL(t))
	})
}

func operatorCommandsBesideServe(t *testing.T, db string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	base := "http://" + addr
	idp, err := devidp.Start(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idp.Close() })

	sessionKey := session.GenerateKey()
	cmdEnv := env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_SESSION_KEY", sessionKey)
	if out, err := runCmd(t, cmdEnv, "seed", "demo"); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	getenv := env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "test",
		"PORTAL_COOKIE_SECURE", "false", "PORTAL_ADDR", addr, "PORTAL_BASE_URL", base, "PORTAL_SESSION_KEY", sessionKey,
		"PORTAL_OIDC_ISSUER", idp.Issuer(), "PORTAL_OIDC_CLIENT_ID", idp.ClientID(), "PORTAL_OIDC_CLIENT_SECRET", idp.ClientSecret())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil || t.Failed() {
			t.Logf("serve: %v\n%s", err, stderr.String())
		}
	})
	waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))
	// The session cache is on: what follows holds with it.
	waitMatch(t, &stderr, regexp.MustCompile(`msg="session cache on"`))

	beside := func(args ...string) string {
		t.Helper()
		out, errOut, err := runSplit(t, cmdEnv, args...)
		if err != nil {
			t.Fatalf("%v beside serve: %v\n%s%s", args, err, out, errOut)
		}
		return out
	}

	// An API key made beside the server works at once, and is refused at
	// its very next request once revoked beside it.
	key := strings.TrimSpace(beside("apikeys", "create", "--org", "1", "--scope", "read", "--name", "ops"))
	admin := func() int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/api/admin/organisation", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if got := admin(); got != http.StatusOK {
		t.Fatalf("a key made beside serve: %d, want 200", got)
	}
	keyID := regexp.MustCompile(`(?m)^\s*(\d+)\b`).FindStringSubmatch(beside("apikeys", "list", "--org", "1"))
	if keyID == nil {
		t.Fatal("apikeys list shows no key")
	}
	beside("apikeys", "revoke", "--org", "1", keyID[1])
	if got := admin(); got != http.StatusUnauthorized {
		t.Fatalf("the key's first request after its revocation beside serve: %d, want 401", got)
	}

	// A staff member added beside the server signs in; removed beside it,
	// their session (served from the session cache until then) no longer
	// opens the staff pages at their very next request.
	beside("staff", "add", "--org", "1", "--email", "ops@club.example", "--name", "Ops", "--role", "admin")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(u string) (int, *url.URL, string) {
		t.Helper()
		res, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		loc, _ := res.Location()
		return res.StatusCode, loc, string(body)
	}
	_, auth, _ := step(base + server.StaffLoginPath + "/start")
	q := auth.Query()
	q.Set("login_as", "ops@club.example")
	auth.RawQuery = q.Encode()
	_, callback, _ := step(auth.String())
	step(callback.String())
	for range 2 { // the second request is answered from the session cache
		if status, _, body := step(base + server.StaffPrefix); status != http.StatusOK || !strings.Contains(body, `data-testid="staff-user-name">Ops<`) {
			t.Fatalf("the staff overview before the removal: %d\n%.2000s", status, body)
		}
	}
	beside("staff", "remove", "--org", "1", "--email", "ops@club.example")
	if status, loc, _ := step(base + server.StaffPrefix); status != http.StatusSeeOther || !strings.Contains(loc.String(), server.StaffLoginPath) {
		t.Fatalf("the removed staff member's next request: %d %v, want a redirect to the sign-in", status, loc)
	}

	// Organisation settings changed beside the server apply within the
	// resolver's refresh, as a change made on another instance does.
	beside("orgs", "set", "--org", "1", "--name", "Beside Rowing Club")
	deadline := time.Now().Add(server.OrganisationRefresh + 20*time.Second)
	for {
		_, _, body := step(base + server.StaffLoginPath)
		if strings.Contains(body, "Beside Rowing Club") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new name never reached the server:\n%.2000s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Payment settings changed beside the server apply within the payment
	// directory's refresh: the club's own Stripe webhook address, which
	// acknowledged events as nobody's while the club had no Stripe account,
	// now checks their signature.
	event := func() int {
		t.Helper()
		res, err := http.Post(base+server.StripeWebhookPath+"/riverside", "application/json", strings.NewReader(`{"id":"evt_1","type":"checkout.session.completed"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if got := event(); got != http.StatusOK {
		t.Fatalf("an event for a club without Stripe: %d, want 200 (ignored)", got)
	}
	secrets := t.TempDir()
	for name, secret := range map[string]string{"key": "sk_test_beside", "whsec": "whsec_beside"} {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	beside("payments", "settings", "--org", "1", "--provider", "stripe",
		"--stripe-key-file", filepath.Join(secrets, "key"), "--stripe-webhook-secret-file", filepath.Join(secrets, "whsec"))
	for deadline := time.Now().Add(payproviders.DefaultRefresh + 20*time.Second); event() != http.StatusBadRequest; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the club's Stripe settings never reached the server: its unsigned event is still not refused")
		}
	}

	// The other commands run too: organisations, persons, invitations,
	// webhooks, exports, definitions, payments, seed (which only checks the
	// schema while a server runs), jobs. None of them writes a session: the
	// server's session cache (on SQLite coherent in process only) hears of
	// every session write because the server makes them all.
	sessions := sessionRows(t, db)
	files := t.TempDir()
	csv := filepath.Join(files, "members.csv")
	if err := os.WriteFile(csv, []byte("externalId,firstName,lastName,dateOfBirth,email,userKeys\nB1,Ann,Beside,1980-01-01,,beside-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	beside("orgs", "create", "--name", "Hill Hockey", "--slug", "hill", "--hosts", "hill.example")
	if out := beside("persons", "import", csv, "--org", "1"); !strings.Contains(out, "1 created") {
		t.Fatalf("persons import beside serve: %s", out)
	}
	beside("invite", "--org", "1", "--period", "1", "--user-keys", "beside-1", "--mail=false")
	beside("webhooks", "add", "--org", "1", "--url", "https://club.example/hook")
	beside("webhooks", "list", "--org", "1")
	beside("export", "registrations", "--org", "1", "--period", "1")
	beside("payments", "credits")
	beside("payments", "attention")
	defFile := filepath.Join(files, "def.yaml")
	def := beside("definitions", "export", "1", "membership")
	if err := os.WriteFile(defFile, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	beside("definitions", "import", defFile)
	beside("seed", "demo")
	beside("jobs", "list")
	beside("migrate", "status")
	if after := sessionRows(t, db); after != sessions {
		t.Fatalf("the commands wrote sessions:\nbefore %s\nafter  %s", sessions, after)
	}

	// migrate up and down change the schema beneath the server: refused on
	// SQLite (PostgreSQL's instances are told apart by no file).
	for _, args := range [][]string{{"migrate", "up"}, {"migrate", "down"}} {
		if !strings.HasPrefix(db, "sqlite:") {
			break
		}
		out, errOut, err := runSplit(t, cmdEnv, args...)
		if !errors.Is(err, errSQLiteInUse) {
			t.Fatalf("%v while serve runs: %v\n%s%s", args, err, out, errOut)
		}
	}
	// The server still answers after all of it.
	if status, _ := get(t, base+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz after the commands: %d", status)
	}
}

// sessionRows is the sessions table as text, read through a connection of
// its own, to tell whether anything wrote a session.
func sessionRows(t *testing.T, databaseURL string) string {
	t.Helper()
	db, err := engine.OpenDB(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		IDHash     string    `bun:"id_hash"`
		Data       string    `bun:"data"`
		LastSeenAt time.Time `bun:"last_seen_at"`
		ExpiresAt  time.Time `bun:"expires_at"`
	}
	if err := db.NewRaw("SELECT id_hash, data, last_seen_at, expires_at FROM sessions ORDER BY id_hash").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no sessions to watch")
	}
	return fmt.Sprint(rows)
}

// commandEnv names the variable that makes the test binary run one
// portal command (its arguments separated by newlines) instead of the
// tests: a command in a process of its own, as an operator runs it.
const commandEnv = "PORTAL_TEST_COMMAND"

// init, not TestMain (the package's TestMain guards the tests' databases):
// the command runs before any test would, and the process ends with it.
func init() {
	if args := os.Getenv(commandEnv); args != "" {
		if err := run(context.Background(), strings.Split(args, "\n"), os.Getenv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(exitCode(err))
		}
		os.Exit(0)
	}
}

// Commands in processes of their own write while the server writes the
// same rows: every write of both sides lands, none fails with "database is
// locked" (on SQLite each waits for the other's write lock).
func TestCommandProcessesWriteBesideServingWrites(t *testing.T) {
	// Side by side: each run waits mostly on its command processes.
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		commandProcessesWriteBesideServingWrites(t, "sqlite:"+filepath.Join(t.TempDir(), "p.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dbtest.SkipWithoutPostgres(t)
		commandProcessesWriteBesideServingWrites(t, postgresURL(t))
	})
}

func commandProcessesWriteBesideServingWrites(t *testing.T, db string) {
	cmdEnv := []string{"PORTAL_DATABASE_URL=" + db, "PORTAL_HASH_SECRET=0123456789abcdef"}
	command := func(args ...string) (string, error) {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(append(os.Environ(), cmdEnv...), commandEnv+"="+strings.Join(args, "\n"))
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := command("seed", "demo"); err != nil {
		t.Fatalf("seed in a process of its own: %v\n%s", err, out)
	}
	key, _, err := runSplit(t, env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef"),
		"apikeys", "create", "--org", "1", "--scope", "write", "--name", "load")
	if err != nil {
		t.Fatal(err)
	}
	key = strings.TrimSpace(key)

	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	getenv := env("PORTAL_DATABASE_URL", db, "PORTAL_HASH_SECRET", "0123456789abcdef", "PORTAL_PAYMENT_PROVIDER", "test",
		"PORTAL_COOKIE_SECURE", "false", "PORTAL_ADDR", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, getenv, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil || t.Failed() {
			t.Logf("serve: %v\n%s", err, stderr.String())
		}
	})
	base := "http://" + waitMatch(t, &stdout, regexp.MustCompile(`portal listening on (\S+)`))[1]

	// The server changes the organisation (a transaction that reads, then
	// writes, then appends to the audit log) as fast as it can while the
	// commands do the same in their processes.
	stop := make(chan struct{})
	served := make(chan error, 1)
	var patches int
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				served <- nil
				return
			default:
			}
			body := fmt.Sprintf(`{"contactEmail":"office%d@club.example"}`, i)
			req, _ := http.NewRequest(http.MethodPatch, base+"/api/admin/organisation", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				served <- err
				return
			}
			answer, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				served <- fmt.Errorf("PATCH %d: %d %s", i, res.StatusCode, answer)
				return
			}
			patches++
		}
	}()
	for i, accent := range []string{"#112233", "#445566", "#778899", "#aabbcc"} {
		if out, err := command("orgs", "set", "--org", "1", "--accent", accent, "--registration-system-id", fmt.Sprint("sys-", i)); err != nil {
			t.Errorf("orgs set in its own process beside the server's writes: %v\n%s", err, out)
		}
		if out, err := command("staff", "add", "--org", "1", "--email", fmt.Sprintf("ops%d@club.example", i), "--name", "Ops", "--role", "viewer"); err != nil {
			t.Errorf("staff add in its own process beside the server's writes: %v\n%s", err, out)
		}
	}
	close(stop)
	if err := <-served; err != nil {
		t.Fatalf("the server's writes beside the commands: %v", err)
	}
	if patches == 0 {
		t.Fatal("the server wrote nothing while the commands ran")
	}
	out, err := command("orgs", "list")
	if err != nil || !strings.Contains(out, "Riverside") {
		t.Fatalf("orgs list: %v\n%s", err, out)
	}
	if out, err := command("staff", "list", "--org", "1"); err != nil || !strings.Contains(out, "ops3@club.example") {
		t.Fatalf("staff list: %v\n%s", err, out)
	}
}

// postgresURL returns the address of a fresh, empty schema of the test
// PostgreSQL, dropped at cleanup, for the portal's own commands (serve
// migrates it).
func postgresURL(t *testing.T) string {
	t.Helper()
	url, _ := dbtest.EmptyPostgresSchema(t, "")
	return url
}
