package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// DBStore keeps sessions in the sessions table of the portal database
// (PostgreSQL or SQLite). Rows are keyed by the SHA-256 of the token, never
// the token itself.
type DBStore struct {
	db       *bun.DB
	codec    valueCodec
	prepared preparedLoad
	// now is the clock Load and Save compare expires_at with. Sessions are
	// cross-checked by the Manager with its own clock, so this one stays real.
	now func() time.Time
}

// NewDBStore returns a Store on db, whose schema the migrations have created.
// With Encrypted the data column holds the values encrypted.
func NewDBStore(db *bun.DB, opts ...StoreOption) *DBStore {
	o := applyOptions(opts)
	return &DBStore{db: db, codec: o.codec, now: time.Now}
}

var (
	_ Store     = (*DBStore)(nil)
	_ Announcer = (*DBStore)(nil)
)

// AnnouncesOn reports whether bus hears the database's own announcements:
// on PostgreSQL a trigger NOTIFYs DefaultPGChannel at commit of every
// update and delete of a session; SQLite cannot tell anyone.
func (st *DBStore) AnnouncesOn(bus Bus) bool {
	b, ok := bus.(*PGBus)
	return ok && b.channel == DefaultPGChannel && st.db.Dialect().Name() == dialect.PG
}

// sessionRow is one row of the sessions table.
type sessionRow struct {
	bun.BaseModel `bun:"table:sessions"`

	IDHash  string `bun:"id_hash,pk"`
	UserKey string `bun:"user_key,notnull"`
	// OrganisationID mirrors the AttrOrganisation value, in clear even
	// when the values are sealed: the engine finds a household's
	// sessions by it (privacy.ExportHousehold, ErasePerson).
	OrganisationID *int64    `bun:"organisation_id"`
	Data           string    `bun:"data,notnull"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
	LastSeenAt     time.Time `bun:"last_seen_at,notnull"`
	ExpiresAt      time.Time `bun:"expires_at,notnull"`
}

// toRow converts s for storage: the id hashed, the values as JSON (or
// sealed JSON), times normalised.
func (st *DBStore) toRow(s *Session) (*sessionRow, error) {
	idHash := hashID(s.ID)
	data, err := st.codec.encode(idHash, s.Values)
	if err != nil {
		return nil, err
	}
	return &sessionRow{
		IDHash:         idHash,
		UserKey:        s.UserKey,
		OrganisationID: organisationOf(s.Values),
		Data:           data,
		CreatedAt:      normTime(s.CreatedAt),
		LastSeenAt:     normTime(s.LastSeenAt),
		ExpiresAt:      normTime(s.ExpiresAt),
	}, nil
}

// unavailable marks a database failure as transient for the callers.
func unavailable(op string, err error) error {
	return fmt.Errorf("session: %s: %w: %w", op, ErrUnavailable, err)
}

// Create inserts s. A duplicate id is reported as an error; with 256-bit
// random ids it means a bug, not bad luck.
func (st *DBStore) Create(ctx context.Context, s *Session) error {
	if s.ID == "" {
		return errors.New("session: create: empty id")
	}
	row, err := st.toRow(s)
	if err != nil {
		return fmt.Errorf("session: create: %w", err)
	}
	// ON CONFLICT DO NOTHING (both dialects) tells a duplicate from a
	// failing database without parsing driver errors.
	res, err := st.db.NewInsert().Model(row).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return unavailable("create", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable("create", err)
	}
	if n == 0 {
		return errors.New("session: create: id already exists")
	}
	return nil
}

// Load returns the unexpired session with this id, or ErrNotFound.
func (st *DBStore) Load(ctx context.Context, id string) (*Session, error) {
	row, err := st.loadRow(ctx, hashID(id), normTime(st.now()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, unavailable("load", err)
	}
	values, err := st.codec.decode(row.IDHash, row.Data)
	if err != nil {
		return nil, fmt.Errorf("session: load: %w", err)
	}
	return &Session{
		ID:         id,
		UserKey:    row.UserKey,
		Values:     values,
		CreatedAt:  normTime(row.CreatedAt),
		LastSeenAt: normTime(row.LastSeenAt),
		ExpiresAt:  normTime(row.ExpiresAt),
	}, nil
}

// Save writes the mutable fields of s (all but ID and CreatedAt). An expired
// row is left alone and reported as ErrNotFound, so a save cannot revive it.
func (st *DBStore) Save(ctx context.Context, s *Session) error {
	row, err := st.toRow(s)
	if err != nil {
		return fmt.Errorf("session: save: %w", err)
	}
	res, err := st.db.NewUpdate().Model(row).
		Column("user_key", "organisation_id", "data", "last_seen_at", "expires_at").
		WherePK().
		Where("expires_at >= ?", normTime(st.now())).
		Exec(ctx)
	if err != nil {
		return unavailable("save", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable("save", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Delete removes the session with this id, if there is one.
func (st *DBStore) Delete(ctx context.Context, id string) error {
	if _, err := st.db.NewDelete().Model((*sessionRow)(nil)).
		Where("id_hash = ?", hashID(id)).
		Exec(ctx); err != nil {
		return unavailable("delete", err)
	}
	return nil
}

// DeleteExpired removes sessions that expired before now; run it
// periodically, since Load only hides them.
func (st *DBStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	res, err := st.db.NewDelete().Model((*sessionRow)(nil)).
		Where("expires_at < ?", normTime(now)).
		Exec(ctx)
	if err != nil {
		return 0, unavailable("delete expired", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, unavailable("delete expired", err)
	}
	// Leases are deleted by their holders; only a crashed holder leaves one.
	if _, err := st.db.NewDelete().Table("session_locks").
		Where("expires_at < ?", normTime(now)).
		Exec(ctx); err != nil {
		return int(n), unavailable("delete expired locks", err)
	}
	return int(n), nil
}
