package enginetest

import (
	"context"
	"testing"

	"github.com/uptrace/bun"
)

// CountRows counts model's rows matching where, failing the test on an
// error.
func CountRows(t testing.TB, db bun.IDB, model any, where string, args ...any) int {
	t.Helper()
	n, err := db.NewSelect().Model(model).Where(where, args...).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
