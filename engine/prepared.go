package engine

import (
	"context"
	"database/sql"
	"sync"

	"github.com/uptrace/bun"
)

// preparedStatements holds the statements of the question step
// (engine/registration/question_step.go), of the other steps' and the form load's reads
// (engine/registration/instance_state.go), prepared once per connection instead of parsed and
// planned on every call: bun writes the arguments into the SQL text, which
// the database must then parse and plan again each time. For the step's
// statements that was the larger part of PostgreSQL's work, and a quarter
// of the portal's CPU on SQLite (docs/BENCHMARKS.md). They bypass bun's
// query builder, so they count themselves in the request's StatementCount.
//
// A connection pooler in front of PostgreSQL must keep prepared statements
// per client connection: PgBouncer in session mode, or in transaction mode
// from version 1.21 with max_prepared_statements set (docs/CONFIGURATION.md,
// PORTAL_DATABASE_MAX_CONNS).
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
func (p *preparedStatements) Query(ctx context.Context, db bun.IDB, text string, args ...any) (*sql.Rows, error) {
	countStatement(ctx)
	stmt, err := p.statement(ctx, db, text)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}

// exec runs the prepared statement of text with args on db, the pool or a
// transaction of it, for its result only.
func (p *preparedStatements) Exec(ctx context.Context, db bun.IDB, text string, args ...any) (sql.Result, error) {
	countStatement(ctx)
	stmt, err := p.statement(ctx, db, text)
	if err != nil {
		return nil, err
	}
	return stmt.ExecContext(ctx, args...)
}

// statement returns the statement of text for db. In a transaction it is
// the pool's statement bound to the transaction's connection (prepared on
// it if it is not yet, and released when the transaction ends); a text the
// pool has not prepared is prepared for the transaction alone, since
// preparing it on the pool would wait for a free connection while the
// transaction holds one (with SQLite's single connection, forever). Callers
// prepare their statements before a transaction (prepare).
func (p *preparedStatements) statement(ctx context.Context, db bun.IDB, text string) (*sql.Stmt, error) {
	tx, inTx := db.(bun.Tx)
	if !inTx {
		return p.prepared(ctx, text)
	}
	p.mu.Lock()
	stmt := p.stmts[text]
	p.mu.Unlock()
	if stmt == nil {
		return tx.Tx.PrepareContext(ctx, text)
	}
	return tx.Tx.StmtContext(ctx, stmt), nil
}

// prepare prepares texts on the pool, outside any transaction, so that a
// transaction can use them.
func (p *preparedStatements) Prepare(ctx context.Context, texts ...string) error {
	for _, text := range texts {
		if _, err := p.prepared(ctx, text); err != nil {
			return err
		}
	}
	return nil
}

// prepared returns the pool's statement for text, preparing it on first
// use; database/sql prepares it again on each connection it runs on. The
// lock is not held while preparing, which waits for a connection.
func (p *preparedStatements) prepared(ctx context.Context, text string) (*sql.Stmt, error) {
	p.mu.Lock()
	stmt, ok := p.stmts[text]
	p.mu.Unlock()
	if ok {
		return stmt, nil
	}
	stmt, err := p.db.DB.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if first, ok := p.stmts[text]; ok { // prepared meanwhile by another caller
		stmt.Close()
		return first, nil
	}
	p.stmts[text] = stmt
	return stmt, nil
}
