package store

import (
	"errors"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// ForUpdate locks the rows q selects for the rest of the transaction on
// PostgreSQL; SQLite's one connection serialises the transactions anyway
// (and knows no FOR UPDATE).
func ForUpdate(q *bun.SelectQuery) *bun.SelectQuery {
	if q.DB().Dialect().Name() == dialect.PG {
		return q.For("UPDATE")
	}
	return q
}

// IsUniqueViolation reports whether err is a unique-constraint failure on PostgreSQL or SQLite.
func IsUniqueViolation(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		return pgErr.Field('C') == "23505"
	}
	// modernc's sqlite error type would pull its module into our imports; its text is stable.
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
