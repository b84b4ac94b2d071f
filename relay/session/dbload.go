package session

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/uptrace/bun/dialect"
)

// loadQuery is the session lookup every relayed request makes.
const loadQuery = `SELECT user_key, data, created_at, last_seen_at, expires_at FROM sessions WHERE id_hash = $1 AND expires_at >= $2`

// preparedLoad holds the lookup as a prepared statement on PostgreSQL,
// which spares the server parsing and planning it on every request.
// database/sql prepares it again on each new connection by itself.
type preparedLoad struct {
	mu   sync.Mutex
	stmt *sql.Stmt
}

// stmt returns the prepared lookup, preparing it on first use; nil when
// the database is not PostgreSQL or preparing failed (then the plain query
// runs, and the next call tries again).
func (st *DBStore) loadStmt(ctx context.Context) *sql.Stmt {
	if st.db.Dialect().Name() != dialect.PG {
		return nil
	}
	st.prepared.mu.Lock()
	defer st.prepared.mu.Unlock()
	if st.prepared.stmt == nil {
		stmt, err := st.db.DB.PrepareContext(ctx, loadQuery)
		if err != nil {
			return nil
		}
		st.prepared.stmt = stmt
	}
	return st.prepared.stmt
}

// loadRow reads the unexpired row of idHash; sql.ErrNoRows when there is none.
func (st *DBStore) loadRow(ctx context.Context, idHash string, now time.Time) (*sessionRow, error) {
	row := &sessionRow{IDHash: idHash}
	if stmt := st.loadStmt(ctx); stmt != nil {
		err := stmt.QueryRowContext(ctx, idHash, now).Scan(&row.UserKey, &row.Data, &row.CreatedAt, &row.LastSeenAt, &row.ExpiresAt)
		return row, err
	}
	err := st.db.NewSelect().Model(row).
		Where("id_hash = ?", idHash).
		Where("expires_at >= ?", now).
		Scan(ctx)
	return row, err
}
