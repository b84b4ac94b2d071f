// Package migrations holds the embedded SQL schema, one folder per SQL dialect,
// and runs it with bun's migrator under a lock so that instances starting
// together do not migrate twice.
package migrations

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Status is one migration and whether it has been applied.
type Status struct {
	Name    string
	Applied bool
}

// lockClass is the first half of the PostgreSQL advisory lock of migrations
// ("port" in ASCII); the second half is the schema's hash, so that
// deployments (and test runs) in other schemas of one database never wait
// for each other, while the instances of one deployment do.
const lockClass = 0x706f7274

// folderFor is the folder of db's dialect's migrations.
func folderFor(db *bun.DB) string {
	if db.Dialect().Name() == dialect.PG {
		return "postgres"
	}
	return "sqlite"
}

func migrationsFor(db *bun.DB) (*migrate.Migrations, error) {
	sub, err := fs.Sub(files, folderFor(db))
	if err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return ms, nil
}

func migrator(ctx context.Context, db *bun.DB) (*migrate.Migrator, error) {
	ms, err := migrationsFor(db)
	if err != nil {
		return nil, err
	}
	return migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true)), nil
}

// withLock runs fn while holding the migration lock. On PostgreSQL it is an
// advisory lock, released by the server if this process dies; on SQLite it is
// bun's lock row, retried until ctx ends because a second process may be
// migrating the same file.
func withLock(ctx context.Context, db *bun.DB, m *migrate.Migrator, fn func() error) error {
	if db.Dialect().Name() == dialect.PG {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		// Polled with try-lock rather than a blocking pg_advisory_lock: a
		// blocking wait longer than the driver's read timeout (another
		// instance running a long migration) would fail with an i/o timeout.
		for {
			var locked bool
			if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?, hashtext(current_schema()))", lockClass).Scan(&locked); err != nil {
				return fmt.Errorf("take migration lock: %w", err)
			}
			if locked {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("take migration lock: another instance is migrating: %w", ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?, hashtext(current_schema()))", lockClass) //nolint:errcheck // the session end releases it anyway
		if err := m.Init(ctx); err != nil {
			return fmt.Errorf("init migration tables: %w", err)
		}
		return fn()
	}
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init migration tables: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := m.Lock(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("migrations are locked by another process (remove the row in bun_migration_locks if none runs): %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer m.Unlock(context.WithoutCancel(ctx)) //nolint:errcheck // a failed unlock is reported by the next Lock
	return fn()
}

// Digest is a hash of the names and contents of db's dialect's migrations:
// what a schema migrated ahead of time (the tests' template database,
// engine/dbtest) is keyed by, so that a changed migration is never taken as
// applied.
func Digest(db *bun.DB) (string, error) {
	folder := folderFor(db)
	entries, err := fs.ReadDir(files, folder)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		b, err := fs.ReadFile(files, folder+"/"+e.Name())
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Up applies every pending migration and returns the names it applied.
func Up(ctx context.Context, db *bun.DB) ([]string, error) {
	m, err := migrator(ctx, db)
	if err != nil {
		return nil, err
	}
	var applied []string
	err = withLock(ctx, db, m, func() error {
		group, err := m.Migrate(ctx)
		if err != nil {
			return fmt.Errorf("migrate up: %w", err)
		}
		for _, mig := range group.Migrations {
			applied = append(applied, mig.Name)
		}
		return nil
	})
	return applied, err
}

// Down rolls back the last group of migrations and returns their names.
func Down(ctx context.Context, db *bun.DB) ([]string, error) {
	m, err := migrator(ctx, db)
	if err != nil {
		return nil, err
	}
	var rolled []string
	err = withLock(ctx, db, m, func() error {
		group, err := m.Rollback(ctx)
		if err != nil {
			return fmt.Errorf("migrate down: %w", err)
		}
		for _, mig := range group.Migrations {
			rolled = append(rolled, mig.Name)
		}
		return nil
	})
	return rolled, err
}

// List reports every known migration with whether it is applied.
func List(ctx context.Context, db *bun.DB) ([]Status, error) {
	m, err := migrator(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := withLock(ctx, db, m, func() error { return nil }); err != nil {
		return nil, err
	}
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]Status, 0, len(ms))
	for _, mig := range ms {
		out = append(out, Status{Name: mig.Name, Applied: mig.IsApplied()})
	}
	return out, nil
}

// ErrStale says the database schema is behind the binary.
var ErrStale = errors.New("database schema is not up to date: run `portal migrate up` or enable PORTAL_AUTO_MIGRATE")

// CheckCurrent returns ErrStale when a migration is pending.
func CheckCurrent(ctx context.Context, db *bun.DB) error {
	list, err := List(ctx, db)
	if err != nil {
		return err
	}
	for _, s := range list {
		if !s.Applied {
			return fmt.Errorf("%w (pending: %s)", ErrStale, s.Name)
		}
	}
	return nil
}
