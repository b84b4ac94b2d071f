package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

var (
	_ Toucher = (*DBStore)(nil)
	_ Locker  = (*DBStore)(nil)
)

// Touch slides the expiry of a live session without rewriting its values.
func (st *DBStore) Touch(ctx context.Context, id string, lastSeenAt, expiresAt time.Time) error {
	res, err := st.db.NewUpdate().Table("sessions").
		Set("last_seen_at = ?", normTime(lastSeenAt)).
		Set("expires_at = ?", normTime(expiresAt)).
		Where("id_hash = ?", hashID(id)).
		Where("expires_at >= ?", normTime(st.now())).
		Exec(ctx)
	if err != nil {
		return unavailable("touch", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable("touch", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// TryLock takes the lease on id in the session_locks table: an insert, or
// an update of a row whose lease has run out, in one statement, so two
// instances cannot both succeed (PostgreSQL's row lock on conflict, SQLite's
// single writer).
func (st *DBStore) TryLock(ctx context.Context, id string, ttl time.Duration) (func(context.Context) error, bool, error) {
	name := hashID(id)
	holder := randomHolder()
	now := normTime(st.now())
	res, err := st.db.NewRaw(
		`INSERT INTO session_locks (name, holder, expires_at) VALUES (?, ?, ?)
		 ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
		 WHERE session_locks.expires_at < ?`,
		name, holder, now.Add(ttl), now).Exec(ctx)
	if err != nil {
		return nil, false, unavailable("lock", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, unavailable("lock", err)
	}
	if n == 0 {
		return nil, false, nil
	}
	release := func(ctx context.Context) error {
		if _, err := st.db.NewDelete().Table("session_locks").
			Where("name = ?", name).Where("holder = ?", holder).
			Exec(ctx); err != nil {
			return unavailable("unlock", err)
		}
		return nil
	}
	return release, true, nil
}

// randomHolder names one holding of a lease, so a release after the lease
// passed to someone else removes nothing.
func randomHolder() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
