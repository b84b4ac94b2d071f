package session_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"portal/engine/dbtest"
	"portal/relay/session"
	"portal/relay/session/sessiontest"
)

// opener returns dbtest's opener for db's dialect, so each conformance case
// gets a fresh database of the same kind.
func opener(db *bun.DB) func(testing.TB) *bun.DB {
	if db.Dialect().Name() == dialect.PG {
		return dbtest.Postgres
	}
	return dbtest.SQLite
}

func TestDBStoreConformance(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		open := opener(db)
		sessiontest.RunStoreConformance(t, func(t *testing.T) session.Store {
			return session.NewDBStore(open(t))
		})
	})
}

// A leaked sessions table must not give usable session ids.
func TestDBStoreKeepsOnlyIDHash(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := session.NewDBStore(db)
		now := time.Now().UTC()
		s := &session.Session{
			ID:         sessiontest.NewID(),
			UserKey:    "user-1",
			Values:     map[string]string{session.AttrBackendJWT: "jwt-1"},
			CreatedAt:  now,
			LastSeenAt: now,
			ExpiresAt:  now.Add(30 * time.Minute),
		}
		if err := st.Create(ctx, s); err != nil {
			t.Fatalf("Create: %v", err)
		}

		var rows []struct {
			IDHash  string `bun:"id_hash"`
			UserKey string `bun:"user_key"`
			Data    string `bun:"data"`
		}
		if err := db.NewSelect().Table("sessions").Column("id_hash", "user_key", "data").Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("sessions has %d rows, want 1", len(rows))
		}
		row := rows[0]
		sum := sha256.Sum256([]byte(s.ID))
		if want := hex.EncodeToString(sum[:]); row.IDHash != want {
			t.Errorf("id_hash = %q, want hex SHA-256 of the token %q", row.IDHash, want)
		}
		for col, v := range map[string]string{"id_hash": row.IDHash, "user_key": row.UserKey, "data": row.Data} {
			if strings.Contains(v, s.ID) {
				t.Errorf("column %s holds the raw token", col)
			}
		}
		var values map[string]string
		if err := json.Unmarshal([]byte(row.Data), &values); err != nil || !maps.Equal(values, s.Values) {
			t.Errorf("data = %q (%v), want the values as a JSON object", row.Data, err)
		}
		if _, err := st.Load(ctx, row.IDHash); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Load(id_hash) error = %v, want ErrNotFound: the stored hash must not work as a token", err)
		}
	})
}

func TestDBStoreDeleteExpired(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := session.NewDBStore(db)
		now := time.Now().UTC()
		for _, expiresIn := range []time.Duration{-time.Hour, -time.Second, time.Hour} {
			s := &session.Session{ID: sessiontest.NewID(), CreatedAt: now.Add(-2 * time.Hour), LastSeenAt: now.Add(-time.Hour), ExpiresAt: now.Add(expiresIn)}
			if err := st.Create(ctx, s); err != nil {
				t.Fatalf("Create: %v", err)
			}
		}
		tests := []struct {
			name     string
			now      time.Time
			wantGone int
			wantLeft int64
		}{
			{"removes the two expired", now, 2, 1},
			{"second run finds nothing", now, 0, 1},
			{"honours the now argument", now.Add(2 * time.Hour), 1, 0},
		}
		for _, tt := range tests {
			n, err := st.DeleteExpired(ctx, tt.now)
			if err != nil {
				t.Fatalf("%s: DeleteExpired: %v", tt.name, err)
			}
			if n != tt.wantGone {
				t.Errorf("%s: DeleteExpired = %d, want %d", tt.name, n, tt.wantGone)
			}
			left, err := db.NewSelect().Table("sessions").Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if left != tt.wantLeft {
				t.Errorf("%s: %d rows left, want %d", tt.name, left, tt.wantLeft)
			}
		}
	})
}

// A database that fails must surface as ErrUnavailable, never as ErrNotFound,
// so handlers answer 503 rather than "log in again".
func TestDBStoreUnavailable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := session.NewDBStore(db)
		now := time.Now().UTC()
		s := &session.Session{ID: sessiontest.NewID(), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			op   func() error
		}{
			{"create", func() error { return st.Create(ctx, s) }},
			{"load", func() error { _, err := st.Load(ctx, s.ID); return err }},
			{"save", func() error { return st.Save(ctx, s) }},
			{"delete", func() error { return st.Delete(ctx, s.ID) }},
			{"delete expired", func() error { _, err := st.DeleteExpired(ctx, now); return err }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.op()
				if !errors.Is(err, session.ErrUnavailable) || errors.Is(err, session.ErrNotFound) {
					t.Fatalf("error = %v, want ErrUnavailable only", err)
				}
			})
		}
	})
}

// TestDBStoreKeepsTheOrganisationInAColumn: a session's organisation
// (AttrOrganisation) is written to the row's organisation_id, in clear
// even when the values are sealed, so that the engine finds one club's
// household sessions by organisation and user key; a session bound to
// none has NULL there.
func TestDBStoreKeepsTheOrganisationInAColumn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := session.NewDBStore(db, session.Encrypted(testKeyring(t)))
		a := newSession("demo", map[string]string{session.AttrOrganisation: "2"})
		b := newSession("", map[string]string{session.AttrBackendJWT: "jwt"})
		for _, s := range []*session.Session{a, b} {
			if err := st.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		column := func(s *session.Session) *int64 {
			t.Helper()
			var org *int64
			sum := sha256.Sum256([]byte(s.ID))
			if err := db.NewSelect().Table("sessions").Column("organisation_id").Where("id_hash = ?", hex.EncodeToString(sum[:])).Scan(ctx, &org); err != nil {
				t.Fatal(err)
			}
			return org
		}
		if org := column(a); org == nil || *org != 2 {
			t.Fatalf("organisation_id of a session of organisation 2: %v", org)
		}
		if org := column(b); org != nil {
			t.Fatalf("organisation_id of a session bound to none: %d", *org)
		}
		a.Values[session.AttrBackendJWT] = "jwt-2"
		if err := st.Save(ctx, a); err != nil {
			t.Fatal(err)
		}
		if org := column(a); org == nil || *org != 2 {
			t.Fatalf("organisation_id after a save: %v", org)
		}
	})
}
