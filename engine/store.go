package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// isUniqueViolation reports whether err is a unique-constraint failure on PostgreSQL or SQLite.
func isUniqueViolation(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		return pgErr.Field('C') == "23505"
	}
	// modernc's sqlite error type would pull its module into our imports; its text is stable.
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// notFoundOr turns sql.ErrNoRows into a not-found engine error and wraps anything else.
func notFoundOr(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(CodeNotFound, "%s not found", what)
	}
	return fmt.Errorf("load %s: %w", what, err)
}

// inTx runs fn in one transaction on db.
func inTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.RunInTx(ctx, nil, fn)
}
