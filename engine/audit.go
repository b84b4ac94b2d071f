package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// The audit log: every change staff make is appended, in the same
// transaction as the change, with who made it and the values before and
// after. Rows are never changed or deleted (the database refuses both).

// Actor is who makes a change: a staff record, or a person the IdP's role
// claim lets in without one (StaffID nil), or the command line.
type Actor struct {
	StaffID *int64
	// Name is how the log shows the actor: an e-mail address, or
	// "command line".
	Name string
}

// CommandLine is the actor of the portal's sub-commands.
var CommandLine = Actor{Name: "command line"}

// AuditEntry is one change to append.
type AuditEntry struct {
	OrganisationID int64
	// Action names the change, "noun.verb": "payment.capture", "staff.add".
	Action string
	// TargetType and TargetID name what was changed: "registration" and
	// its process id, "staff" and its id.
	TargetType, TargetID string
	// InstanceID is the registration the change belongs to, so its
	// detail page can show it; nil for changes to no registration.
	InstanceID *int64
	// Before and After are the changed values, stored as JSON; nil: none.
	Before, After any
}

// AuditRecord is one stored row of the audit log.
type AuditRecord struct {
	bun.BaseModel  `bun:"table:audit_log"`
	ID             int64     `bun:"id,pk,autoincrement"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	Actor          string    `bun:"actor,notnull"`
	StaffID        *int64    `bun:"staff_id"`
	Action         string    `bun:"action,notnull"`
	TargetType     string    `bun:"target_type,notnull"`
	TargetID       string    `bun:"target_id,notnull"`
	InstanceID     *int64    `bun:"instance_id"`
	BeforeJSON     string    `bun:"before_json,notnull"`
	AfterJSON      string    `bun:"after_json,notnull"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
	// ErasedAt is when an erasure replaced personal data in the details
	// (engine/privacy/personal_erasure.go), the one change the database allows.
	ErasedAt *time.Time `bun:"erased_at"`
}

// Audit appends one entry in the caller's transaction: every staff action
// calls it inside the transaction that makes its change, so a change is
// never without its entry, nor an entry without its change.
func (s *Service) Audit(ctx context.Context, tx bun.IDB, actor Actor, e AuditEntry) error {
	return s.AppendAudit(ctx, tx, actor, e)
}

func (s *Service) AppendAudit(ctx context.Context, tx bun.IDB, actor Actor, e AuditEntry) error {
	before, err := auditJSON(e.Before)
	if err != nil {
		return err
	}
	after, err := auditJSON(e.After)
	if err != nil {
		return err
	}
	r := &AuditRecord{OrganisationID: e.OrganisationID, Actor: actor.Name, StaffID: actor.StaffID, Action: e.Action,
		TargetType: e.TargetType, TargetID: e.TargetID, InstanceID: e.InstanceID, BeforeJSON: before, AfterJSON: after,
		CreatedAt: s.Clock()}
	if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}

// AppendAudits appends entries by one actor in one statement, in the
// caller's transaction: what AppendAudit writes for each, for a batch
// (a statement import's unmatched credits) that would otherwise cost a
// round trip per entry.
func (s *Service) AppendAudits(ctx context.Context, tx bun.IDB, actor Actor, entries []AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	records := make([]AuditRecord, len(entries))
	now := s.Clock()
	for i, e := range entries {
		before, err := auditJSON(e.Before)
		if err != nil {
			return err
		}
		after, err := auditJSON(e.After)
		if err != nil {
			return err
		}
		records[i] = AuditRecord{OrganisationID: e.OrganisationID, Actor: actor.Name, StaffID: actor.StaffID, Action: e.Action,
			TargetType: e.TargetType, TargetID: e.TargetID, InstanceID: e.InstanceID, BeforeJSON: before, AfterJSON: after,
			CreatedAt: now}
	}
	if _, err := tx.NewInsert().Model(&records).Exec(ctx); err != nil {
		return fmt.Errorf("append audit entries: %w", err)
	}
	return nil
}

func auditJSON(v any) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("audit entry: %w", err)
	}
	return string(b), nil
}

// SecretAuditValue is what the audit log keeps of a sealed secret: "" when
// none is set, else "set " and a short fingerprint of its sealed form. A
// new secret is sealed afresh, so a rotation changes the fingerprint and
// shows in before and after, while the log holds nothing derived from the
// secret itself (a hash of a short secret could be guessed back).
func SecretAuditValue(sealed string) string {
	if sealed == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(sealed))
	return "set " + hex.EncodeToString(sum[:4])
}

// AuditQuery selects audit rows of one organisation, newest first.
type AuditQuery struct {
	OrganisationID int64
	// InstanceID narrows to one registration; 0: all.
	InstanceID int64
	// Actor, Action and TargetType narrow to exactly that actor, action
	// and kind of record; TargetID (with TargetType) to one record. "":
	// any.
	Actor, Action, TargetType, TargetID string
	// From and Until narrow to entries made at or after From and before
	// Until; zero: open.
	From, Until time.Time
	// BeforeID pages: rows older than this id; 0: from the newest.
	BeforeID int64
	// Limit is at most 200; 0 is 50.
	Limit int
}

// AuditLog lists audit rows as q selects them.
func (s *Service) AuditLog(ctx context.Context, q AuditQuery) (out []AuditRecord, err error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	q.Limit = min(q.Limit, 200)
	sel := s.db.NewSelect().Model(&out).Where("organisation_id = ?", q.OrganisationID)
	if q.InstanceID != 0 {
		sel = sel.Where("instance_id = ?", q.InstanceID)
	}
	if q.BeforeID != 0 {
		sel = sel.Where("id < ?", q.BeforeID)
	}
	for col, v := range map[string]string{"actor": q.Actor, "action": q.Action, "target_type": q.TargetType, "target_id": q.TargetID} {
		if v != "" {
			sel = sel.Where("? = ?", bun.Ident(col), v)
		}
	}
	if !q.From.IsZero() {
		sel = sel.Where("created_at >= ?", q.From.UTC())
	}
	if !q.Until.IsZero() {
		sel = sel.Where("created_at < ?", q.Until.UTC())
	}
	if err := sel.Order("id DESC").Limit(int64(q.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load audit log: %w", err)
	}
	return out, nil
}

// AuditFacets are the values the audit log of an organisation holds, for
// its filters: the actors, actions and kinds of record, each sorted.
type AuditFacets struct {
	Actors, Actions, TargetTypes []string
}

// AuditFacets lists the distinct actors, actions and kinds of record of
// an organisation's audit log.
func (s *Service) AuditFacets(ctx context.Context, orgID int64) (f AuditFacets, err error) {
	for col, out := range map[string]*[]string{"actor": &f.Actors, "action": &f.Actions, "target_type": &f.TargetTypes} {
		if err := s.db.NewSelect().Model((*AuditRecord)(nil)).ColumnExpr("DISTINCT ?", bun.Ident(col)).
			Where("organisation_id = ?", orgID).OrderExpr("? ASC", bun.Ident(col)).Scan(ctx, out); err != nil {
			return f, fmt.Errorf("load audit %s values: %w", col, err)
		}
	}
	return f, nil
}

type pendingAuditKey struct{}

// pendingAudit is the entry WithAudit carries. unchanged is set by the
// operation when it found its change made before (a replayed capture):
// the entry is then left out, so that a repeated post does not log twice.
type pendingAudit struct {
	actor     Actor
	entry     AuditEntry
	unchanged bool
}

// WithAudit returns ctx carrying an audit entry that the engine operation
// called with it writes in its own transaction, when that commits: for
// staff actions made through an operation with a transaction of its own
// (a capture settles in settle's), so that the change and its entry
// commit together. When the operation changes nothing (auditUnchanged),
// no entry is written.
func WithAudit(ctx context.Context, actor Actor, e AuditEntry) context.Context {
	return context.WithValue(ctx, pendingAuditKey{}, &pendingAudit{actor: actor, entry: e})
}

// AuditUnchanged tells the transaction's pending audit entry, if any, that
// the operation changed nothing (its event was recorded before).
func AuditUnchanged(ctx context.Context) {
	if p, ok := ctx.Value(pendingAuditKey{}).(*pendingAudit); ok {
		p.unchanged = true
	}
}

// AuditChangedTo completes the transaction's pending audit entry, if any,
// with what field became: for a value the entry's Before names but whose
// new value only the operation knows (a capture's order status, "Unpaid
// → Paid"). A field Before does not name, or an After that is not a map,
// is left as it is.
func AuditChangedTo(ctx context.Context, field string, v any) {
	p, ok := ctx.Value(pendingAuditKey{}).(*pendingAudit)
	if !ok {
		return
	}
	before, ok := p.entry.Before.(map[string]any)
	if _, named := before[field]; !ok || !named {
		return
	}
	after, ok := p.entry.After.(map[string]any)
	if !ok {
		return
	}
	after[field] = v
}

type txStepKey struct{}

// WithTxStep returns ctx carrying a step that the engine operation called
// with it runs at the end of its own transaction (auditedTx): for a change
// that must commit or roll back with that operation's, such as a stored
// bank credit marked assigned by the capture that books it.
func WithTxStep(ctx context.Context, step func(ctx context.Context, tx bun.Tx) error) context.Context {
	return context.WithValue(ctx, txStepKey{}, step)
}

// InAudit reports whether ctx carries an audit entry or a transaction step
// for auditedTx: a change made with one must run in its transaction.
func InAudit(ctx context.Context) bool {
	return ctx.Value(pendingAuditKey{}) != nil || ctx.Value(txStepKey{}) != nil
}

// AuditedTx wraps a transaction's function: after it succeeds, the step
// the context carries (withTxStep), then the audit entry (WithAudit), if
// any, are run in the same transaction.
func (s *Service) AuditedTx(fn func(ctx context.Context, tx bun.Tx) error) func(ctx context.Context, tx bun.Tx) error {
	return func(ctx context.Context, tx bun.Tx) error {
		p, audited := ctx.Value(pendingAuditKey{}).(*pendingAudit)
		if audited {
			p.unchanged = false // a retried transaction starts over
		}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if step, ok := ctx.Value(txStepKey{}).(func(ctx context.Context, tx bun.Tx) error); ok {
			if err := step(ctx, tx); err != nil {
				return err
			}
		}
		if !audited || p.unchanged {
			return nil
		}
		return s.AppendAudit(ctx, tx, p.actor, p.entry)
	}
}
