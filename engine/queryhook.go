package engine

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"
)

// StatementCount counts the SQL statements run under one context, so that a
// request can report how many it cost (the Server-Timing header, benchmarks).
type StatementCount struct {
	n  atomic.Int64
	tx atomic.Int64
}

// Load returns the number of statements counted so far, not counting
// transaction control (BEGIN, COMMIT, ROLLBACK).
func (c *StatementCount) Load() int64 { return c.n.Load() }

// TxControl returns the number of BEGIN, COMMIT and ROLLBACK counted so far.
func (c *StatementCount) TxControl() int64 { return c.tx.Load() }

type statementCountKey struct{}

// WithStatementCount returns a context whose statements are counted in the returned counter.
func WithStatementCount(ctx context.Context) (context.Context, *StatementCount) {
	c := new(StatementCount)
	return context.WithValue(ctx, statementCountKey{}, c), c
}

// QueryHook logs every statement at debug level and counts it in the
// context's StatementCount, if any.
type QueryHook struct {
	Log *slog.Logger
}

var _ bun.QueryHook = QueryHook{}

// BeforeQuery implements bun.QueryHook.
func (h QueryHook) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if c, ok := ctx.Value(statementCountKey{}).(*StatementCount); ok {
		switch e.Query {
		case "BEGIN", "COMMIT", "ROLLBACK":
			c.tx.Add(1)
		default:
			c.n.Add(1)
		}
	}
	return ctx
}

// countStatement counts one statement run outside bun's query builder
// (prepared.go) in the context's StatementCount, if any.
func countStatement(ctx context.Context) {
	if c, ok := ctx.Value(statementCountKey{}).(*StatementCount); ok {
		c.n.Add(1)
	}
}

// AfterQuery implements bun.QueryHook.
func (h QueryHook) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if h.Log == nil || !h.Log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	h.Log.LogAttrs(ctx, slog.LevelDebug, "sql", slog.String("op", e.Operation()),
		slog.Duration("duration", time.Since(e.StartTime)), slog.String("query", e.Query), slog.Any("err", e.Err))
}
