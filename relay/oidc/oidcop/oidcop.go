// Package oidcop starts zitadel's example OpenID Provider (a certified
// implementation, github.com/zitadel/oidc/v3/example/server) for tests, so
// that sign-ins meet a real peer with its own habits: it sends email and
// email_verified only from the userinfo endpoint, not in the ID token.
//
// The binary is PORTAL_OIDC_OP_BIN, else bin/tools/oidc-op-<version> of
// the repository (make oidc-op installs it). Without one the test is
// skipped with one line saying how to get it, unless
// PORTAL_OIDC_OP=required (as in CI), which fails it.
package oidcop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// Version is the example OP release the tests are written against.
const Version = "v3.51.17"

// The OP's confidential web client.
const (
	ClientID     = "web"
	ClientSecret = "secret"
)

// User is one account of the OP, in its users file's shape (the example
// server's storage.User, which has no JSON tags).
type User struct {
	ID            string
	Username      string
	Password      string
	FirstName     string
	LastName      string
	Email         string
	EmailVerified bool
	// PreferredLanguage is a BCP 47 tag; the OP refuses an empty one.
	PreferredLanguage string
}

// OP is a running example OP.
type OP struct {
	// Issuer is the OP's issuer URL, http://localhost:PORT/ (the example
	// server names itself so).
	Issuer string
	base   string
	log    *lockedBuffer
}

// binary finds the OP executable, or "".
func binary() string {
	if p := os.Getenv("PORTAL_OIDC_OP_BIN"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "bin", "tools", "oidc-op-"+Version)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

// freePort asks the kernel for a free port. The OP listens on every
// interface (it takes only a port), which is acceptable in tests.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("oidc-op: no free port: %v", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// lockedBuffer keeps the OP's log for a failing test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start runs the OP for the test's duration with the users given (none:
// the OP's own two, test-user@localhost and test-user2, password
// verysecure), accepting redirectURIs for its clients.
func Start(t testing.TB, users []User, redirectURIs ...string) *OP {
	t.Helper()
	bin := binary()
	if bin == "" {
		msg := "oidc-op " + Version + " not found: run make oidc-op (or set PORTAL_OIDC_OP_BIN)"
		if os.Getenv("PORTAL_OIDC_OP") == "required" {
			t.Fatal(msg + "; PORTAL_OIDC_OP=required")
		}
		t.Skip(msg + "; the certified-OP staff sign-in suite SKIPPED")
	}
	port := freePort(t)
	env := append(os.Environ(), "PORT="+port, "REDIRECT_URI="+strings.Join(redirectURIs, ","))
	if len(users) > 0 {
		byID := map[string]User{}
		for _, u := range users {
			if u.PreferredLanguage == "" {
				u.PreferredLanguage = "en"
			}
			byID[u.ID] = u
		}
		raw, err := json.Marshal(byID)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "users.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "USERS_FILE="+path)
	}
	op := &OP{Issuer: "http://localhost:" + port + "/", base: "http://localhost:" + port, log: &lockedBuffer{}}
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, op.log, op.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oidc-op: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("oidc-op log:\n%s", op.log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(op.base + "/.well-known/openid-configuration")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return op
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("oidc-op did not answer on %s: %v\n%s", op.base, err, op.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SignIn follows the OP's side of a sign-in from authorizeURL with c (a
// client with a cookie jar that does not follow redirects): it fills the
// OP's HTML login form with username and password and returns the
// address the OP sends the browser back to (the client's redirect URI
// with code and state, or with an error).
func (op *OP) SignIn(t testing.TB, c *http.Client, authorizeURL, username, password string) string {
	t.Helper()
	next := authorizeURL
	for range 10 {
		if !strings.HasPrefix(next, op.base+"/") {
			return next // back at the client
		}
		res, err := c.Get(next)
		if err != nil {
			t.Fatalf("oidc-op: GET %s: %v", next, err)
		}
		if loc := res.Header.Get("Location"); res.StatusCode/100 == 3 && loc != "" {
			res.Body.Close()
			next = resolve(t, next, loc)
			continue
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("oidc-op: %s answered %d (%v)", next, res.StatusCode, err)
		}
		form := doc.Find("form").First()
		if form.Length() == 0 {
			t.Fatalf("oidc-op: no login form on %s", next)
		}
		values := url.Values{}
		form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
			values.Set(in.AttrOr("name", ""), in.AttrOr("value", ""))
		})
		values.Set("username", username)
		values.Set("password", password)
		action := resolve(t, next, form.AttrOr("action", next))
		res, err = c.PostForm(action, values)
		if err != nil {
			t.Fatalf("oidc-op: POST %s: %v", action, err)
		}
		res.Body.Close()
		loc := res.Header.Get("Location")
		if res.StatusCode/100 != 3 || loc == "" {
			t.Fatalf("oidc-op: login of %s refused: %d", username, res.StatusCode)
		}
		next = resolve(t, action, loc)
	}
	t.Fatalf("oidc-op: too many redirects from %s", authorizeURL)
	return ""
}

func resolve(t testing.TB, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Parse(ref)
	if err != nil {
		t.Fatalf("oidc-op: bad address %q: %v", ref, err)
	}
	return r.String()
}

// String is the OP's address, for messages.
func (op *OP) String() string { return fmt.Sprintf("oidc-op %s at %s", Version, op.base) }
