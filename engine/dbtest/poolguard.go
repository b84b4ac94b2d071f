package dbtest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// PoolWait is how long a statement on a test's SQLite database may wait
// for the database's one connection. SQLite runs with a single connection
// (engine.OpenDB), so a statement sent through the pool (s.db) by code
// inside a transaction waits for the connection its own transaction holds:
// in production a request that never answers, and every request after it
// queueing behind it. In tests such a wait fails the test after PoolWait,
// naming the statement's caller, instead of hanging until go test's
// timeout. Statements of concurrent tests' goroutines queue for
// milliseconds; two seconds is far beyond any of them.
const PoolWait = 2 * time.Second

// ErrPoolWait is the error a statement fails with when it waited PoolWait
// for the connection (wrapped in the guard's message, which names its
// caller); the statement itself sees its context cancelled.
var ErrPoolWait = errors.New("dbtest: a statement waited too long for SQLite's only connection")

// guardSQLite opens the SQLite database of url with the pool guard:
// statements that wait longer than wait for the connection are cancelled and
// reported (with their caller) to report.
func guardSQLite(url string, wait time.Duration, report func(error)) (*bun.DB, error) {
	db, err := engine.OpenSQLiteVia(url, func(c driver.Connector) driver.Connector { return guardConnector{c} })
	if err != nil {
		return nil, err
	}
	return db.WithQueryHook(&poolGuard{wait: wait, report: report}), nil
}

// poolGuard is a bun query hook: every statement's context carries a
// pendingStatement whose timer, unless the driver saw the statement get the
// connection (guardConn) first, cancels it and reports it.
type poolGuard struct {
	wait   time.Duration
	report func(error)
}

type pendingKey struct{}

type txKey struct{}

// pendingStatement is one statement waiting for, or holding, the connection.
type pendingStatement struct {
	mu       sync.Mutex
	acquired bool
	timedOut bool
	timer    *time.Timer
	cancel   context.CancelFunc

	query  string
	caller []uintptr
	tx     *openTx // the transaction whose context the statement runs in, if any
}

// openTx is a transaction begun through the guarded database, put in the
// context bun hands to RunInTx's function.
type openTx struct {
	mu    sync.Mutex
	open  bool
	begun []uintptr
}

func (tx *openTx) isOpen() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.open
}

// BeforeQuery implements bun.QueryHook.
func (g *poolGuard) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	switch e.Query {
	case "COMMIT", "ROLLBACK":
		return ctx // on the transaction's own connection
	}
	p := &pendingStatement{query: e.Query, caller: callers()}
	p.tx, _ = ctx.Value(txKey{}).(*openTx)
	ctx, p.cancel = context.WithCancel(ctx)
	ctx = context.WithValue(ctx, pendingKey{}, p)
	if e.Query == "BEGIN" {
		ctx = context.WithValue(ctx, txKey{}, &openTx{open: true, begun: p.caller})
	}
	p.timer = time.AfterFunc(g.wait, func() { g.expire(p) })
	return ctx
}

// AfterQuery implements bun.QueryHook.
func (g *poolGuard) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	switch e.Query {
	case "COMMIT", "ROLLBACK":
		if tx, ok := ctx.Value(txKey{}).(*openTx); ok {
			tx.mu.Lock()
			tx.open = false
			tx.mu.Unlock()
		}
		return
	}
	if p, ok := ctx.Value(pendingKey{}).(*pendingStatement); ok {
		p.got() // a statement that failed before reaching the driver waits no more either
	}
}

// got records that the statement has the connection; it fails with the
// guard's error when the statement's wait already timed out.
func (p *pendingStatement) got() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timedOut {
		return ErrPoolWait
	}
	if !p.acquired {
		p.acquired = true
		p.timer.Stop()
	}
	return nil
}

func (g *poolGuard) expire(p *pendingStatement) {
	p.mu.Lock()
	if p.acquired {
		p.mu.Unlock()
		return
	}
	p.timedOut = true
	p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%v: it waited %s, most likely for the connection its own transaction holds: "+
		"code inside a transaction used the pool (s.db) instead of the transaction (pass the bun.IDB down).\n", ErrPoolWait, g.wait)
	q := p.query
	if len(q) > 300 {
		q = q[:300] + "…"
	}
	fmt.Fprintf(&b, "statement: %s\ncaller:\n%s", q, formatCallers(p.caller))
	if p.tx != nil && p.tx.isOpen() {
		fmt.Fprintf(&b, "the transaction open in the caller's context was begun by:\n%s", formatCallers(p.tx.begun))
	}
	g.report(errors.New(b.String()))
	p.cancel()
}

// callers is the stack of the statement's caller, without runtime's frames.
func callers() []uintptr {
	pcs := make([]uintptr, 64)
	return pcs[:runtime.Callers(3, pcs)]
}

// formatCallers writes the frames of pcs that are the project's (not bun's,
// database/sql's, the runtime's or the guard's), up to twelve.
func formatCallers(pcs []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	n := 0
	for {
		f, more := frames.Next()
		if !skipFrame(f.Function) {
			fmt.Fprintf(&b, "  %s\n      %s:%d\n", f.Function, f.File, f.Line)
			if n++; n == 12 {
				break
			}
		}
		if !more {
			break
		}
	}
	return b.String()
}

func skipFrame(fn string) bool {
	for _, p := range []string{"github.com/uptrace/bun", "database/sql", "runtime.", "testing.", "portal/engine/dbtest.", "context."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// guardConnector makes connections that tell the guard when a statement got
// the connection: database/sql calls them with the statement's context once
// it has one.
type guardConnector struct{ driver.Connector }

func (c guardConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardConn{conn}, nil
}

// got tells the statement of ctx, if any, that it has the connection.
func got(ctx context.Context) error {
	if p, ok := ctx.Value(pendingKey{}).(*pendingStatement); ok {
		return p.got()
	}
	return nil
}

// guardConn forwards to the driver's connection (modernc.org/sqlite's, which
// implements every interface below), first telling the guard.
type guardConn struct{ driver.Conn }

var (
	_ driver.ConnBeginTx        = (*guardConn)(nil)
	_ driver.ConnPrepareContext = (*guardConn)(nil)
	_ driver.ExecerContext      = (*guardConn)(nil)
	_ driver.QueryerContext     = (*guardConn)(nil)
	_ driver.Pinger             = (*guardConn)(nil)
	_ driver.SessionResetter    = (*guardConn)(nil)
	_ driver.Validator          = (*guardConn)(nil)
)

func (c *guardConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := got(ctx); err != nil {
		return nil, err
	}
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *guardConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := got(ctx); err != nil {
		return nil, err
	}
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *guardConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := got(ctx); err != nil {
		return nil, err
	}
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *guardConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := got(ctx); err != nil {
		return nil, err
	}
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *guardConn) Ping(ctx context.Context) error {
	if err := got(ctx); err != nil {
		return err
	}
	return c.Conn.(driver.Pinger).Ping(ctx)
}

func (c *guardConn) ResetSession(ctx context.Context) error {
	got(ctx) // a statement that timed out meanwhile fails at its own call
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *guardConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }
