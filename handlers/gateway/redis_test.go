package gateway_test

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

// redisProcess is a redis-server of the test's own, so it can be stopped
// and started again without disturbing the shared test Redis.
type redisProcess struct {
	t    *testing.T
	dir  string
	port int
	cmd  *exec.Cmd
}

func (p *redisProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(p.port), "--dir", p.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no")
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start redis-server: %v", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.addr()})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			p.t.Fatal("redis-server did not come up")
		}
		time.Sleep(20 * time.Millisecond) // polling the new process, bounded by the deadline
	}
}

// crash kills the server without a goodbye; appendfsync always has already
// put every write on disk, as a persistent production Redis would.
func (p *redisProcess) crash() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

func (p *redisProcess) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Redis going away answers 503 and keeps the session; once Redis is back,
// the same cookie works again without a new login. With the session cache
// (as deployed), losing Redis also takes the cache offline, so the outage
// shows within the bus's failure detection instead of being hidden.
func TestRedisRestart(t *testing.T) {
	sessiontest.Redis(t) // runs where the Redis suites run, says so plainly otherwise
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("Redis restart test skipped: no redis-server binary on PATH")
	}
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "store", true: "cached"}[cached], func(t *testing.T) { testRedisRestart(t, cached) })
	}
}

func testRedisRestart(t *testing.T, cached bool) {
	p := &redisProcess{t: t, dir: t.TempDir(), port: freePort(t)}
	p.start()
	t.Cleanup(p.crash)
	rdb, err := session.NewRedisClient("redis://" + p.addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	o := handlertest.GatewayOptions{NoOIDC: true, Store: session.NewRedisStore(rdb, session.Encrypted(handlertest.GatewayKeyring))}
	if cached {
		bus := session.NewRedisBus(rdb, "")
		t.Cleanup(func() { bus.Close() })
		o.Bus = bus
	}
	env := handlertest.NewGateway(t, dbtest.SQLite(t), o)
	c := env.NewClient()
	if res := env.HashLogin(c, "demo"); res.Status != http.StatusOK {
		t.Fatalf("login: %d", res.Status)
	}
	_, before := env.RelayEcho(c)
	if before.Authorization == "" {
		t.Fatal("no token relayed before the restart")
	}

	p.crash()
	if cached {
		sessiontest.WaitFor(t, 5*time.Second, "the session cache to notice the outage", func() bool { return !env.Cache.Online() })
	}
	res, _ := env.RelayEcho(c)
	handlertest.ExpectHTTPError(t, res, http.StatusServiceUnavailable, handlertest.GatewayPrefix+"/echo/x")
	if res.Header.Get("Set-Cookie") != "" {
		t.Fatal("an outage touched the session cookie")
	}
	res = env.HashLogin(env.NewClient(), "demo")
	handlertest.ExpectHTTPError(t, res, http.StatusServiceUnavailable, "/api/auth/external-login")

	p.start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, after := env.RelayEcho(c)
		if res.Status == http.StatusOK {
			if after.Authorization != before.Authorization {
				t.Fatalf("after the restart the relay sent %q, want the session's token %q", after.Authorization, before.Authorization)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d after Redis came back", res.Status)
		}
		time.Sleep(20 * time.Millisecond) // the client's pool may hold dead connections for a moment
	}
	if cached {
		sessiontest.WaitFor(t, 10*time.Second, "the session cache to come back online", env.Cache.Online)
	}
}

// Readiness covers the Redis session store: a load balancer stops sending
// traffic while it is gone.
func TestReadinessChecksRedis(t *testing.T) {
	sessiontest.Redis(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("readiness test skipped: no redis-server binary on PATH")
	}
	p := &redisProcess{t: t, dir: t.TempDir(), port: freePort(t)}
	p.start()
	t.Cleanup(p.crash)
	rdb, err := session.NewRedisClient("redis://" + p.addr() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	env := handlertest.NewGateway(t, dbtest.SQLite(t), handlertest.GatewayOptions{NoOIDC: true, Store: session.NewRedisStore(rdb)})
	if res := env.Request(env.Client, http.MethodGet, "/readyz", nil); res.Status != http.StatusOK {
		t.Fatalf("readyz with Redis up: %d", res.Status)
	}
	p.crash()
	if res := env.Request(env.Client, http.MethodGet, "/readyz", nil); res.Status != http.StatusServiceUnavailable {
		t.Fatalf("readyz with Redis down: %d", res.Status)
	}
}
