package invitation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
	"portal/engine/message"
	"portal/engine/organisation"
	"portal/engine/registration"
)

// Invitations are the portal's own sign-in links for a household (a user
// key) and a period: unlike the spec's hash links they expire and can be
// revoked one by one. The engine keeps the rows (who was invited when,
// opened when, revoked) and queues the e-mails; the link itself, an HMAC
// over the row's id and expiry, is made and checked by the HTTP layer
// (relay/invitelink), which holds the key.

// KindInvitation is the outbox message (and job) kind of an invitation e-mail.
const KindInvitation engine.MessageKind = "invitation"

// Invitation is one issued link.
type Invitation struct {
	bun.BaseModel  `bun:"table:invitations"`
	ID             int64      `bun:"id,pk,autoincrement"`
	OrganisationID int64      `bun:"organisation_id,notnull"`
	PeriodID       int64      `bun:"period_id,notnull"`
	UserKey        string     `bun:"user_key,notnull"`
	CreatedAt      time.Time  `bun:"created_at,notnull"`
	ExpiresAt      time.Time  `bun:"expires_at,notnull"`
	OpenedAt       *time.Time `bun:"opened_at"`
	RevokedAt      *time.Time `bun:"revoked_at"`
}

// State is where an invitation stands, the furthest step it reached.
type State string

// Invitation states, from the first to the last.
const (
	InvitationInvited    State = "invited"    // link issued, no e-mail sent (yet)
	InvitationSent       State = "sent"       // the e-mail went out
	InvitationOpened     State = "opened"     // the link was opened (a registration may have started, not committed)
	InvitationRegistered State = "registered" // the household committed its registration (an order or a completed one)
	InvitationPaid       State = "paid"       // its order is paid
	InvitationExpired    State = "expired"    // expired before the household registered
	InvitationRevoked    State = "revoked"
)

// Status is an invitation with what became of it.
type Status struct {
	Invitation
	State State
	// Mailed is when the e-mail went out; nil: not (yet) sent or not mailed by the portal.
	Mailed     *time.Time
	Registered bool
	Paid       bool
	// Persons are the names of the persons linked to the user key.
	Persons []string
}

// Request says whom to invite to a period: every linked user
// key (All), the user keys of some persons (ExternalIDs, the external
// system's person ids) or some user keys. Expires is the validity of the
// links (0: DefaultInvitationExpiry); Send queues an e-mail to each
// household (false: the caller hands the links out itself).
type Request struct {
	PeriodID    int64
	All         bool
	ExternalIDs []string
	UserKeys    []string
	Expires     time.Duration
	Send        bool
}

// Skip is a requested person or user key that got no invitation.
type Skip struct {
	ExternalID string `json:"externalId,omitempty"`
	UserKey    string `json:"userKey,omitempty"`
	Reason     string `json:"reason"`
}

// Report is what CreateInvitations did.
type Report struct {
	Created []Invitation
	Skipped []Skip
	// Persons are the names of the persons of each created invitation's
	// household, by user key (as Invitations lists them).
	Persons map[string][]string
}

// Reasons an invitation was not made.
const (
	SkipUnknownPerson     = "unknown person"
	SkipNotLinked         = "person has no user key"
	SkipUnknownUserKey    = "unknown user key"
	SkipRegistered        = "already registered"
	SkipAlreadyInvited    = "already invited (a link that is still valid)"
	SkipNoEmail           = "no e-mail address"
	maxInvitationsPerCall = 20000
)

// Invitation refusals when a link is opened; errors.Is tells them apart.
var (
	ErrInvitationExpired = &engine.Error{Code: engine.CodeConflict, Message: "This invitation has expired."}
	ErrInvitationRevoked = &engine.Error{Code: engine.CodeConflict, Message: "This invitation was withdrawn."}
)

// CreateInvitations issues invitations to a period of orgID, one per user
// key, in one transaction. It skips households that already registered
// and those holding a link still valid, so running it again invites only
// the new ones. With Send each gets an e-mail through the job runner. The
// audit log keeps what actor asked for and how many were invited.
func (s *Service) CreateInvitations(ctx context.Context, actor engine.Actor, orgID int64, req Request) (rep *Report, err error) {
	if req.Expires == 0 {
		org, err := engine.LoadOrganisation(ctx, s.DB(), orgID)
		if err != nil {
			return nil, err
		}
		req.Expires = org.InvitationExpiry()
	}
	var fields []engine.FieldError
	chosen := 0
	for _, set := range []bool{req.All, len(req.ExternalIDs) > 0, len(req.UserKeys) > 0} {
		if set {
			chosen++
		}
	}
	if chosen != 1 {
		fields = append(fields, engine.FieldError{Field: "persons", Message: "name exactly one of: all, externalIds, userKeys"})
	}
	if len(req.ExternalIDs)+len(req.UserKeys) > maxInvitationsPerCall {
		fields = append(fields, engine.FieldError{Field: "persons", Message: fmt.Sprintf("at most %d per call", maxInvitationsPerCall)})
	}
	if req.Expires < engine.MinInvitationExpiry || req.Expires > engine.MaxInvitationExpiry {
		fields = append(fields, engine.FieldError{Field: "expires", Message: "must be between 1 hour and 366 days"})
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeValidation, Message: "The invitation request is not valid.", Fields: fields}
	}
	now := s.Clock()
	rep = &Report{Created: []Invitation{}, Skipped: []Skip{}, Persons: map[string][]string{}}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		period, err := organisation.OrgPeriod(ctx, tx, orgID, req.PeriodID)
		if err != nil {
			return err
		}
		if period.Status != engine.PeriodOpen {
			return &engine.Error{Code: engine.CodeConflict, Message: "The period is closed: open it before inviting to it."}
		}
		keys, err := invitationKeys(ctx, tx, orgID, req, rep)
		if err != nil {
			return err
		}
		busy, err := invitedOrRegistered(ctx, tx, period.ID, keys, now)
		if err != nil {
			return err
		}
		var emails map[string][]string
		if req.Send {
			if emails, err = householdAddresses(ctx, tx, orgID, keys); err != nil {
				return err
			}
		}
		for _, key := range keys {
			if reason := busy[key]; reason != "" {
				rep.Skipped = append(rep.Skipped, Skip{UserKey: key, Reason: reason})
				continue
			}
			if req.Send && len(emails[key]) == 0 {
				rep.Skipped = append(rep.Skipped, Skip{UserKey: key, Reason: SkipNoEmail})
				continue
			}
			inv := Invitation{OrganisationID: orgID, PeriodID: period.ID, UserKey: key, CreatedAt: now, ExpiresAt: now.Add(req.Expires)}
			if _, err := tx.NewInsert().Model(&inv).Exec(ctx); err != nil {
				return fmt.Errorf("store invitation: %w", err)
			}
			if req.Send {
				payload, _ := json.Marshal(Payload{InvitationID: inv.ID})
				if err := store.QueueMessage(ctx, tx, &engine.OutboxMessage{Kind: KindInvitation, DedupKey: invitationMessageKey(inv.ID),
					Recipient: strings.Join(emails[key], ", "), Payload: string(payload), CreatedAt: now}); err != nil {
					return err
				}
			}
			rep.Created = append(rep.Created, inv)
		}
		if len(rep.Created) == 0 {
			return nil
		}
		created := make([]string, 0, len(rep.Created))
		for _, inv := range rep.Created {
			created = append(created, inv.UserKey)
		}
		persons, err := householdPersons(ctx, tx, orgID, created)
		if err != nil {
			return err
		}
		for key, ps := range persons {
			for _, p := range ps {
				rep.Persons[key] = append(rep.Persons[key], p.FirstName+" "+p.LastName)
			}
		}
		whom := "all"
		if !req.All {
			whom = fmt.Sprintf("%d chosen", len(req.ExternalIDs)+len(req.UserKeys))
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "invitation.create", TargetType: "period",
			TargetID: fmt.Sprint(period.ID), After: map[string]any{"whom": whom, "invited": len(rep.Created), "skipped": len(rep.Skipped),
				"send": req.Send, "expires": now.Add(req.Expires).UTC().Format(time.RFC3339)}})
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// Payload is the outbox payload of an invitation e-mail.
type Payload struct {
	InvitationID int64 `json:"invitationId"`
}

func invitationMessageKey(id int64) string {
	return string(KindInvitation) + ":" + strconv.FormatInt(id, 10)
}

// invitationKeys resolves a request to distinct user keys of orgID, in
// the order asked (sorted for All), noting what resolves to none.
func invitationKeys(ctx context.Context, db bun.IDB, orgID int64, req Request, rep *Report) ([]string, error) {
	var links []struct {
		UserKey    string  `bun:"user_key"`
		ExternalID *string `bun:"external_id"`
	}
	q := db.NewSelect().TableExpr("persons AS p").ColumnExpr("up.user_key, p.external_id").
		Join("LEFT JOIN user_persons AS up ON up.person_id = p.id").Where("p.organisation_id = ?", orgID)
	switch {
	case req.All:
		q = q.Where("up.user_key IS NOT NULL").OrderExpr("up.user_key")
	case len(req.ExternalIDs) > 0:
		q = q.Where("p.external_id IN (?)", bun.List(req.ExternalIDs))
	default:
		q = q.Where("up.user_key IN (?)", bun.List(req.UserKeys))
	}
	if err := q.Scan(ctx, &links); err != nil {
		return nil, fmt.Errorf("resolve invitation persons: %w", err)
	}
	keysOf := map[string][]string{} // external id or user key → user keys
	for _, l := range links {
		if l.UserKey == "" {
			continue
		}
		if l.ExternalID != nil {
			keysOf["ext:"+*l.ExternalID] = append(keysOf["ext:"+*l.ExternalID], l.UserKey)
		}
		keysOf["key:"+l.UserKey] = append(keysOf["key:"+l.UserKey], l.UserKey)
	}
	var keys []string
	add := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	switch {
	case req.All:
		for _, l := range links {
			add(l.UserKey)
		}
	case len(req.ExternalIDs) > 0:
		known := map[string]bool{}
		for _, l := range links {
			if l.ExternalID != nil {
				known[*l.ExternalID] = true
			}
		}
		for _, ext := range req.ExternalIDs {
			switch {
			case !known[ext]:
				rep.Skipped = append(rep.Skipped, Skip{ExternalID: ext, Reason: SkipUnknownPerson})
			case len(keysOf["ext:"+ext]) == 0:
				rep.Skipped = append(rep.Skipped, Skip{ExternalID: ext, Reason: SkipNotLinked})
			}
			for _, k := range keysOf["ext:"+ext] {
				add(k)
			}
		}
	default:
		for _, k := range req.UserKeys {
			if len(keysOf["key:"+k]) == 0 {
				rep.Skipped = append(rep.Skipped, Skip{UserKey: k, Reason: SkipUnknownUserKey})
				continue
			}
			add(k)
		}
	}
	return keys, nil
}

// invitedOrRegistered says, of keys, which already registered for the
// period and which hold an invitation still valid at now.
func invitedOrRegistered(ctx context.Context, db bun.IDB, periodID int64, keys []string, now time.Time) (map[string]string, error) {
	out := map[string]string{}
	if len(keys) == 0 {
		return out, nil
	}
	var invited []string
	if err := db.NewSelect().Model((*Invitation)(nil)).Column("user_key").
		Where("period_id = ? AND user_key IN (?) AND revoked_at IS NULL AND expires_at > ?", periodID, bun.List(keys), now).
		Scan(ctx, &invited); err != nil {
		return nil, fmt.Errorf("load invitations: %w", err)
	}
	for _, k := range invited {
		out[k] = SkipAlreadyInvited
	}
	registered, err := registeredKeys(ctx, db, periodID, keys)
	if err != nil {
		return nil, err
	}
	for k := range registered {
		out[k] = SkipRegistered
	}
	return out, nil
}

// committedStates are the statuses of a registration the member committed:
// what "registered" means for invitations. Opening a link starts a
// registration (the overview page does) but registers nobody.
var committedStates = []engine.ProcessState{engine.StateDone, engine.StatePendingPayment, engine.StateCompleted}

// registeredKeys returns the user keys (of keys, or all when nil) with a
// committed registration for the period, and whether each paid.
func registeredKeys(ctx context.Context, db bun.IDB, periodID int64, keys []string) (map[string]bool, error) {
	var started []string
	q := db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("user_key").
		Where("related_entity_type = ? AND related_entity_id = ? AND status IN (?)", engine.EntityMembership, periodID, bun.List(committedStates))
	if keys != nil {
		q = q.Where("user_key IN (?)", bun.List(keys))
	}
	if err := q.Scan(ctx, &started); err != nil {
		return nil, fmt.Errorf("load registrations: %w", err)
	}
	var paid []string
	q = db.NewSelect().Model((*engine.Order)(nil)).Column("user_key").Where("period_id = ? AND status = ?", periodID, engine.OrderPaid)
	if keys != nil {
		q = q.Where("user_key IN (?)", bun.List(keys))
	}
	if err := q.Scan(ctx, &paid); err != nil {
		return nil, fmt.Errorf("load paid orders: %w", err)
	}
	out := map[string]bool{}
	for _, k := range started {
		out[k] = false
	}
	for _, k := range paid {
		out[k] = true
	}
	return out, nil
}

// householdPersons returns the persons linked to each of keys in orgID.
func householdPersons(ctx context.Context, db bun.IDB, orgID int64, keys []string) (map[string][]engine.Person, error) {
	out := map[string][]engine.Person{}
	if len(keys) == 0 {
		return out, nil
	}
	var rows []struct {
		engine.Person
		UserKey string `bun:"user_key"`
	}
	if err := db.NewSelect().TableExpr("persons AS person").ColumnExpr("person.*, up.user_key").
		Join("JOIN user_persons AS up ON up.person_id = person.id").
		Where("up.organisation_id = ? AND up.user_key IN (?)", orgID, bun.List(keys)).
		OrderExpr("person.id").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load household persons: %w", err)
	}
	for _, r := range rows {
		out[r.UserKey] = append(out[r.UserKey], r.Person)
	}
	return out, nil
}

// householdAddresses returns the distinct e-mail addresses of each of keys' persons.
func householdAddresses(ctx context.Context, db bun.IDB, orgID int64, keys []string) (map[string][]string, error) {
	persons, err := householdPersons(ctx, db, orgID, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(persons))
	for k, ps := range persons {
		out[k] = store.UniqueAddresses(ps)
	}
	return out, nil
}

// Invitations lists the invitations of a period of orgID, newest first,
// with the state each reached: what the admin API and the staff pages show.
func (s *Service) Invitations(ctx context.Context, orgID, periodID int64) (out []Status, err error) {
	err = registration.Of(s.Service).OnOneConn(ctx, func(db bun.IDB) error {
		if _, err := organisation.OrgPeriod(ctx, db, orgID, periodID); err != nil {
			return err
		}
		var invs []Invitation
		if err := db.NewSelect().Model(&invs).Where("period_id = ?", periodID).OrderExpr("id DESC").Scan(ctx); err != nil {
			return fmt.Errorf("load invitations: %w", err)
		}
		out = make([]Status, 0, len(invs))
		if len(invs) == 0 {
			return nil
		}
		var keys, msgKeys []string
		for _, inv := range invs {
			if !slices.Contains(keys, inv.UserKey) {
				keys = append(keys, inv.UserKey)
			}
			msgKeys = append(msgKeys, invitationMessageKey(inv.ID))
		}
		registered, err := registeredKeys(ctx, db, periodID, nil)
		if err != nil {
			return err
		}
		persons, err := householdPersons(ctx, db, orgID, keys)
		if err != nil {
			return err
		}
		var msgs []engine.OutboxMessage
		if err := db.NewSelect().Model(&msgs).Where("dedup_key IN (?) AND sent_at IS NOT NULL", bun.List(msgKeys)).Scan(ctx); err != nil {
			return fmt.Errorf("load invitation messages: %w", err)
		}
		mailed := map[string]*time.Time{}
		for _, m := range msgs {
			mailed[m.DedupKey] = m.SentAt
		}
		now := s.Clock()
		for _, inv := range invs {
			paid, reg := registered[inv.UserKey]
			st := Status{Invitation: inv, Mailed: mailed[invitationMessageKey(inv.ID)], Registered: reg, Paid: paid, Persons: []string{}}
			for _, p := range persons[inv.UserKey] {
				st.Persons = append(st.Persons, p.FirstName+" "+p.LastName)
			}
			st.State = st.state(now)
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// state is the furthest step st reached at now.
func (st *Status) state(now time.Time) State {
	switch {
	case st.RevokedAt != nil:
		return InvitationRevoked
	case st.Paid:
		return InvitationPaid
	case st.Registered:
		return InvitationRegistered
	case !now.Before(st.ExpiresAt):
		return InvitationExpired
	case st.OpenedAt != nil:
		return InvitationOpened
	case st.Mailed != nil:
		return InvitationSent
	}
	return InvitationInvited
}

// RevokeInvitation withdraws one invitation of orgID: its link is refused
// from then on (audited as actor's). Revoking a revoked one changes nothing.
func (s *Service) RevokeInvitation(ctx context.Context, actor engine.Actor, orgID, id int64) (inv *Invitation, err error) {
	inv = new(Invitation)
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(inv).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "invitation")
		}
		if inv.RevokedAt != nil {
			return nil
		}
		now := s.Clock()
		if _, err := tx.NewUpdate().Model((*Invitation)(nil)).Set("revoked_at = ?", now).
			Where("id = ? AND revoked_at IS NULL", id).Exec(ctx); err != nil {
			return fmt.Errorf("revoke invitation %d: %w", id, err)
		}
		inv.RevokedAt = &now
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "invitation.revoke", TargetType: "invitation",
			TargetID: fmt.Sprint(id), Before: map[string]any{"userKey": inv.UserKey, "revoked": false},
			After: map[string]any{"userKey": inv.UserKey, "revoked": true}})
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// RevokeInvitationsOf withdraws every valid invitation of a user key to a
// period of orgID (a household whose links went astray), without touching
// anyone else's; it returns how many. The revocation and its audit entry
// (invitation.revoke, one per call, naming the household and the period)
// are one transaction; revoking none writes none.
func (s *Service) RevokeInvitationsOf(ctx context.Context, actor engine.Actor, orgID, periodID int64, userKey string) (n int, err error) {
	if _, err := organisation.OrgPeriod(ctx, s.DB(), orgID, periodID); err != nil {
		return 0, err
	}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Invitation)(nil)).Set("revoked_at = ?", s.Clock()).
			Where("organisation_id = ? AND period_id = ? AND user_key = ? AND revoked_at IS NULL", orgID, periodID, userKey).Exec(ctx)
		if err != nil {
			return fmt.Errorf("revoke invitations: %w", err)
		}
		k, _ := res.RowsAffected()
		if n = int(k); n == 0 {
			return nil
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "invitation.revoke", TargetType: "period",
			TargetID: fmt.Sprint(periodID), Before: map[string]any{"userKey": userKey, "revoked": false},
			After: map[string]any{"userKey": userKey, "revoked": true, "count": n}})
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// OpenInvitation is a member opening invitation id of orgID (whose link
// the caller verified): it refuses a revoked or expired one
// (ErrInvitationRevoked, ErrInvitationExpired), records the first open
// and returns the invitation, whose user key the caller signs in.
func (s *Service) OpenInvitation(ctx context.Context, orgID, id int64) (inv *Invitation, err error) {
	inv = new(Invitation)
	if err := s.DB().NewSelect().Model(inv).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "invitation")
	}
	now := s.Clock()
	switch {
	case inv.RevokedAt != nil:
		return nil, ErrInvitationRevoked
	case !now.Before(inv.ExpiresAt):
		return nil, ErrInvitationExpired
	}
	if inv.OpenedAt == nil {
		err := engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Model((*Invitation)(nil)).Set("opened_at = ?", now).
				Where("id = ? AND opened_at IS NULL", id).Exec(ctx)
			if err != nil {
				return fmt.Errorf("record invitation %d opened: %w", id, err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil // opened meanwhile in another tab: announced there
			}
			return engine.EmitEvent(ctx, tx, orgID, engine.EventInvitationOpened, engine.InvitationEventData{InvitationID: inv.ID,
				PeriodID: inv.PeriodID, UserKey: inv.UserKey}, now)
		})
		if err != nil {
			return nil, err
		}
		inv.OpenedAt = &now
	}
	return inv, nil
}

// Mail is what an invitation e-mail says.
type Mail struct {
	Invitation   Invitation
	Organisation engine.Organisation
	Club         string
	Period       string
	Persons      []string
	To           []string
	// Language is the household's last registration's (HouseholdLanguage).
	Language string
}

// ErrNotDue says an invitation's e-mail is no longer worth
// sending: it was revoked or expired, or the household registered, since
// it was queued.
var ErrNotDue = errors.New("invitation no longer due")

// LoadInvitationMail gathers an invitation e-mail for the job that sends it.
func LoadInvitationMail(ctx context.Context, db bun.IDB, p Payload, now time.Time) (*Mail, error) {
	m := new(Mail)
	if err := db.NewSelect().Model(&m.Invitation).Where("id = ?", p.InvitationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "invitation")
	}
	inv := m.Invitation
	if inv.RevokedAt != nil || !now.Before(inv.ExpiresAt) {
		return nil, ErrNotDue
	}
	if reg, err := registeredKeys(ctx, db, inv.PeriodID, []string{inv.UserKey}); err != nil {
		return nil, err
	} else if _, ok := reg[inv.UserKey]; ok {
		return nil, ErrNotDue
	}
	period, err := store.LoadPeriod(ctx, db, inv.PeriodID)
	if err != nil {
		return nil, err
	}
	org, err := engine.LoadOrganisation(ctx, db, inv.OrganisationID)
	if err != nil {
		return nil, err
	}
	persons, err := householdPersons(ctx, db, inv.OrganisationID, []string{inv.UserKey})
	if err != nil {
		return nil, err
	}
	m.Organisation, m.Club, m.To = *org, org.Name, store.UniqueAddresses(persons[inv.UserKey])
	for _, p := range persons[inv.UserKey] {
		m.Persons = append(m.Persons, p.FirstName+" "+p.LastName)
	}
	if m.Language, err = message.HouseholdLanguage(ctx, db, inv.OrganisationID, inv.UserKey); err != nil {
		return nil, err
	}
	period.Localize(m.Language)
	m.Period = period.Name
	return m, nil
}

// PublicAddress is where orgID's members reach its pages
// (OrganisationAddress on the portal's public URL, WithPublicURL), for the
// links the HTTP layer hands out; "" when the engine has no public URL.
func (s *Service) PublicAddress(ctx context.Context, orgID int64) string {
	return s.OrgBase(ctx, s.DB(), orgID)
}
