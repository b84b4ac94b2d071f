package server

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"portal/engine"
)

// requestTiming splits a request's SQL statements into the session lookup
// and the rest, for the Server-Timing header.
type requestTiming struct {
	count   *engine.StatementCount
	session int64
}

type timingKey struct{}

// ServerTiming adds `Server-Timing: db-session;desc="N", db;desc="M", db-tx;desc="T"`
// to responses: the statements the session lookup and the handler ran, and
// the transaction control statements (BEGIN, COMMIT) around them. It is
// off unless configured, because it tells clients about internals.
func ServerTiming(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, count := engine.WithStatementCount(c.Request().Context())
		t := &requestTiming{count: count}
		c.SetRequest(c.Request().WithContext(context.WithValue(ctx, timingKey{}, t)))
		c.Response().Before(func() {
			total := count.Load()
			c.Response().Header().Set("Server-Timing", fmt.Sprintf(`db-session;desc="%d", db;desc="%d", db-tx;desc="%d"`,
				t.session, total-t.session, count.TxControl()))
		})
		return next(c)
	}
}

// MarkSessionLoaded records how many statements the session lookup took.
func MarkSessionLoaded(ctx context.Context) {
	if t, ok := ctx.Value(timingKey{}).(*requestTiming); ok {
		t.session = t.count.Load()
	}
}
