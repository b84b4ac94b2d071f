package engine

import (
	"context"
	"database/sql"
	"sync"

	"github.com/uptrace/bun"
)

// preparedStatements holds the statements of the question step on
// PostgreSQL (question_step.go), prepared on the server once per
// connection instead of parsed and planned on every call: bun writes the
// arguments into the SQL text, which PostgreSQL must then parse and plan
// again each time, and for the step's statements that was the larger part
// of the database's work (docs/BENCHMARKS.md). They bypass bun's query
// builder, so they count themselves in the request's StatementCount.
//
// A connection pooler in front of PostgreSQL must keep prepared statements
// per client connection: PgBouncer in session mode, or in transaction mode
// from version 1.21 with max_prepared_statements set (README).
type preparedStatements struct {
	db    *bun.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newPreparedStatements(db *bun.DB) *preparedStatements {
	return &preparedStatements{db: db, stmts: map[string]*sql.Stmt{}}
}

// query runs the prepared statement of text with args on db, the pool or a
// transaction of it.
func (p *preparedStatements) query(ctx context.Context, db bun.IDB, text string, args ...any) (*sql.Rows, error) {
	countStatement(ctx)
	stmt, err := p.prepared(ctx, text)
	if err != nil {
		return nil, err
	}
	if tx, ok := db.(bun.Tx); ok {
		// Prepared on the transaction's connection if it is not yet; the
		// statement is released when the transaction ends.
		return tx.Tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
	}
	return stmt.QueryContext(ctx, args...)
}

// prepared returns the pool's statement for text, preparing it on first
// use; database/sql prepares it again on each connection it runs on.
func (p *preparedStatements) prepared(ctx context.Context, text string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stmt, ok := p.stmts[text]; ok {
		return stmt, nil
	}
	stmt, err := p.db.DB.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	p.stmts[text] = stmt
	return stmt, nil
}
