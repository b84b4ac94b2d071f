package dbtest_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine/dbtest"
	"portal/migrations"
)

// Each PostgreSQL test gets a database of its own, copied from the
// template: current (every migration applied, none pending) and apart from
// every other test's (what one writes is not in the next), and nothing a
// test writes reaches the template the next copy is made from.
func TestPostgresDatabasesAreCurrentAndApart(t *testing.T) {
	dbtest.SkipWithoutPostgres(t)
	ctx := context.Background()
	first, second := dbtest.Postgres(t), dbtest.Postgres(t)
	name := func(db *bun.DB) string {
		var name string
		if err := db.QueryRowContext(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	if a, b := name(first), name(second); a == b {
		t.Fatalf("two tests share the database %s", a)
	}
	for _, db := range []*bun.DB{first, second} {
		if err := migrations.CheckCurrent(ctx, db); err != nil {
			t.Fatalf("a test's database is not current: %v", err)
		}
	}
	if _, err := first.ExecContext(ctx, "CREATE TABLE written_by_one_test (x int)"); err != nil {
		t.Fatal(err)
	}
	for what, db := range map[string]*bun.DB{"another test's database": second, "a later copy of the template": dbtest.Postgres(t)} {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'written_by_one_test'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("one test's table is in %s: %d (%v)", what, n, err)
		}
	}
}
