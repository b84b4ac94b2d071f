package engine

import (
	"database/sql/driver"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"modernc.org/sqlite"
)

// Case-insensitive substring search the same on PostgreSQL and SQLite.
//
// SQLite's LOWER folds ASCII only, so "MÜLLER" would never find "Müller".
// Rather than a normalised copy of every searched column, maintained on
// every write (persons are written by the demo, the person import, the
// admin API and more), SQLite gets a Go function, portal_fold, registered
// with modernc.org/sqlite's driver (OpenDB opens SQLite with it): it folds
// as Go does, the same as the pattern, and needs no schema change. PostgreSQL's lower() folds Unicode under
// the database's locale (C.UTF-8 or any UTF-8 locale; not under "C"), and a
// trigram index on lower(...) serves the name search where pg_trgm could be
// installed (migration 20261215000002).

// foldFunction is the SQLite function that case-folds text as foldText.
const foldFunction = "portal_fold"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(foldFunction, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return FoldText(v), nil
		case []byte:
			return FoldText(string(v)), nil
		}
		return args[0], nil // NULL and numbers fold to themselves
	})
}

// FoldText case-folds text for a search, as the database's fold does.
func FoldText(s string) string { return strings.ToLower(s) }

// FoldSQL is the SQL that case-folds expr on db's dialect.
func FoldSQL(db bun.IDB, expr string) string {
	if db.Dialect().Name() == dialect.SQLite {
		return foldFunction + "(" + expr + ")"
	}
	return "lower(" + expr + ")"
}

// LikeEscape is the ESCAPE clause every LIKE in the engine ends with, so
// that a % or _ in what staff type matches itself (SQLite has no default
// escape character; PostgreSQL's is the same backslash).
const LikeEscape = ` ESCAPE '\'`

// EscapeLike makes s match itself in a LIKE pattern with likeEscape.
func EscapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ContainsPattern is the LIKE pattern of the values containing s.
func ContainsPattern(s string) string { return "%" + EscapeLike(s) + "%" }
