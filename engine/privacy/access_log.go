package privacy

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
)

// The access log (issue 30): who of the staff looked at whose data. Every
// opening of a registration's page, a person's data or an export is one
// row (staff_access_log), written when the data is shown, outside any
// change's transaction: reading is no change, so it is not in the audit
// log. Administrators see it on the staff access log page; a member's
// export includes the rows about their household; the retention job
// prunes rows older than the organisation's access log retention
// (retention.go). docs/DATA-PROTECTION.md, "Access log".

// AccessKind is what a staff member opened.
type AccessKind string

// Kinds of access recorded.
const (
	AccessRegistration AccessKind = "registration"
	AccessPerson       AccessKind = "person"
	AccessExport       AccessKind = "export"
)

// AccessKinds lists every kind, for filters.
var AccessKinds = []AccessKind{AccessRegistration, AccessPerson, AccessExport}

// AccessEntry is one row of the access log.
type AccessEntry struct {
	bun.BaseModel  `bun:"table:staff_access_log,alias:al"`
	ID             int64      `bun:"id,pk,autoincrement"`
	OrganisationID int64      `bun:"organisation_id,notnull"`
	StaffID        *int64     `bun:"staff_id"`
	Actor          string     `bun:"actor,notnull"`
	Kind           AccessKind `bun:"kind,notnull"`
	RecordID       string     `bun:"record_id,notnull"`
	UserKey        *string    `bun:"user_key"`
	PersonID       *int64     `bun:"person_id"`
	CreatedAt      time.Time  `bun:"created_at,notnull"`
}

// Access is one opening to record: what (Kind, RecordID) and whose data
// (the household's user key and, for one person, the person).
type Access struct {
	OrganisationID int64
	Kind           AccessKind
	RecordID       string
	UserKey        string // "" when not known
	PersonID       int64  // 0 when not one person
}

// RecordAccess appends one row to the access log for actor.
func (s *Service) RecordAccess(ctx context.Context, actor engine.Actor, a Access) (err error) {
	return recordAccess(ctx, s.DB(), actor, a, s.Clock())
}

// BulkRead is the access of a read of many members' data at once: a
// period's export (the admin API, `portal export`), the registrations or
// open payments as CSV, a collection run's file. Its record is what was
// read and with which filter ("periods/1/export/payments?format=json",
// "debit-runs/4/file"); it names no one household, so it is on the access
// log page and in no member's export.
func BulkRead(orgID int64, what, filter string) Access {
	if filter != "" {
		what += "?" + filter
	}
	return Access{OrganisationID: orgID, Kind: AccessExport, RecordID: what}
}

// DebitRunFileRead is the access of a collection run's file (every
// debtor's name and account), the same record on the staff page, in the
// admin API and from `portal debits`.
func DebitRunFileRead(orgID, runID int64) Access {
	return BulkRead(orgID, "debit-runs/"+strconv.FormatInt(runID, 10)+"/file", "")
}

// LoggedWriter returns a writer to w that records the access once, before
// the first byte goes to w: a read refused before it (an unknown period)
// is not logged, and no byte goes out unlogged (a failed record fails the
// write, so the reader gets an error instead of the data). It writes to
// the pool: it is for reads that hold no transaction.
func (s *Service) LoggedWriter(ctx context.Context, w io.Writer, actor engine.Actor, a Access) io.Writer {
	return &loggedWriter{ctx: ctx, w: w, record: func(ctx context.Context) error { return s.RecordAccess(ctx, actor, a) }}
}

type loggedWriter struct {
	ctx    context.Context
	w      io.Writer
	record func(context.Context) error
	logged bool
}

func (l *loggedWriter) Write(p []byte) (int, error) {
	if !l.logged {
		if err := l.record(l.ctx); err != nil {
			return 0, err
		}
		l.logged = true
	}
	return l.w.Write(p)
}

// recordAccess is RecordAccess on db (a transaction's, for an export
// made in one).
func recordAccess(ctx context.Context, db bun.IDB, actor engine.Actor, a Access, now time.Time) error {
	e := &AccessEntry{OrganisationID: a.OrganisationID, StaffID: actor.StaffID, Actor: actor.Name, Kind: a.Kind,
		RecordID: a.RecordID, CreatedAt: now.UTC()}
	if a.UserKey != "" {
		e.UserKey = &a.UserKey
	}
	if a.PersonID != 0 {
		e.PersonID = &a.PersonID
	}
	if _, err := db.NewInsert().Model(e).Exec(ctx); err != nil {
		return fmt.Errorf("record access: %w", err)
	}
	return nil
}

// AccessQuery selects rows of one organisation's access log, newest first.
type AccessQuery struct {
	OrganisationID int64
	// Actor narrows to one staff member (their e-mail as logged); "": all.
	Actor string
	// Kind and RecordID narrow to one record ("registration", "12"); "": all.
	Kind     AccessKind
	RecordID string
	// BeforeID pages: rows older than this id; 0: from the newest.
	BeforeID int64
	// Limit is at most 200; 0 is 50.
	Limit int
}

// AccessLog lists the access log as q selects it.
func (s *Service) AccessLog(ctx context.Context, q AccessQuery) (out []AccessEntry, err error) {
	if !engine.InScope(ctx, q.OrganisationID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, 200)
	sel := s.DB().NewSelect().Model(&out).Where("organisation_id = ?", q.OrganisationID)
	if q.Actor != "" {
		sel = sel.Where("actor = ?", q.Actor)
	}
	if q.Kind != "" {
		sel = sel.Where("kind = ?", q.Kind)
	}
	if q.RecordID != "" {
		sel = sel.Where("record_id = ?", q.RecordID)
	}
	if q.BeforeID != 0 {
		sel = sel.Where("id < ?", q.BeforeID)
	}
	if err := sel.Order("id DESC").Limit(int64(q.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load access log: %w", err)
	}
	return out, nil
}

// AccessActors are the actors of an organisation's access log, for the
// page's filter.
func (s *Service) AccessActors(ctx context.Context, orgID int64) (out []string, err error) {
	if !engine.InScope(ctx, orgID) {
		return nil, engine.Errorf(engine.CodeNotFound, "organisation not found")
	}
	if err := s.DB().NewSelect().Model((*AccessEntry)(nil)).ColumnExpr("DISTINCT actor").Where("organisation_id = ?", orgID).
		OrderExpr("actor").Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("load access log actors: %w", err)
	}
	return out, nil
}

// AccessLogAbout is the access log about households (their user keys) or
// persons, oldest first, for the member's export; on db (a
// transaction's or the pool).
func AccessLogAbout(ctx context.Context, db bun.IDB, orgID int64, userKeys []string, personIDs []int64) ([]AccessEntry, error) {
	var out []AccessEntry
	if len(userKeys) == 0 && len(personIDs) == 0 {
		return out, nil
	}
	q := db.NewSelect().Model(&out).Where("organisation_id = ?", orgID).WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
		if len(userKeys) > 0 {
			w = w.WhereOr("user_key IN (?)", bun.List(userKeys))
		}
		if len(personIDs) > 0 {
			w = w.WhereOr("person_id IN (?)", bun.List(personIDs))
		}
		return w
	})
	if err := q.OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load access log: %w", err)
	}
	return out, nil
}

// pruneAccessLog deletes the access log rows of an organisation older
// than cutoff; it returns how many.
func pruneAccessLog(ctx context.Context, db bun.IDB, orgID int64, cutoff time.Time) (int, error) {
	res, err := db.NewDelete().Model((*AccessEntry)(nil)).Where("organisation_id = ? AND created_at < ?", orgID, cutoff.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune access log: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ExportAccess is one access log entry in a personal-data export: who of
// the staff opened what, when.
type ExportAccess struct {
	Actor    string     `json:"actor"`
	Kind     AccessKind `json:"kind"`
	RecordID string     `json:"recordId"`
	PersonID *int64     `json:"personId,omitempty"`
	At       time.Time  `json:"at"`
}

// gatherAccessLog is the export's access log: the entries about its
// households (a registration opened shows all of it) or its persons.
func gatherAccessLog(ctx context.Context, db bun.IDB, sc *exportScope, out *PersonalData) error {
	rows, err := AccessLogAbout(ctx, db, sc.org.ID, sc.userKeys, sc.personIDs)
	if err != nil {
		return err
	}
	for _, r := range rows {
		out.AccessLog = append(out.AccessLog, ExportAccess{Actor: r.Actor, Kind: r.Kind, RecordID: r.RecordID, PersonID: r.PersonID, At: r.CreatedAt.UTC()})
	}
	return nil
}

// eraseAccessLog keeps the access log's entries about an erased person
// (who looked, when: they name the person by id only) but replaces the
// user key of a household with no person left by its label, as in its
// other records (eraseHouseholdKey).
func eraseAccessLog(ctx context.Context, tx bun.Tx, e *erasure) (int64, error) {
	var n int64
	for _, k := range e.gone {
		res, err := tx.NewUpdate().Model((*AccessEntry)(nil)).Set("user_key = ?", e.keyLabels[k]).
			Where("organisation_id = ? AND user_key = ?", e.org.ID, k).Exec(ctx)
		if err != nil {
			return n, err
		}
		m, _ := res.RowsAffected()
		n += m
	}
	return n, nil
}
