package privacy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// Members' requests about their data (issue 30): from the "Your data"
// page a member asks for a correction (their text says what is wrong) or
// for the erasure of a person or the household. The request is stored,
// e-mailed to the club's contact address (KindDataRequest), listed for
// staff, and when staff mark it done the household is told
// (KindDataRequestDone). Both steps are audited.

// Data request kinds.
const (
	DataRequestCorrection = "correction"
	DataRequestErasure    = "erasure"
)

// Data request states.
const (
	DataRequestOpen = "open"
	DataRequestDone = "done"
)

// Message kinds of data requests.
const (
	// KindDataRequest tells the club's contact address of a new request.
	KindDataRequest engine.MessageKind = "data_request"
	// KindDataRequestDone tells the household its request was answered.
	KindDataRequestDone engine.MessageKind = "data_request_done"
)

// MaxDataRequestText bounds a request's text.
const MaxDataRequestText = 2000

// MaxDataRequestsPerDay bounds the requests one household may make in any
// 24 hours: each is e-mailed to the club, so without a bound a session
// could fill the club's mailbox. Staff answer open requests as a whole; a
// member who has more to say writes it in one.
const MaxDataRequestsPerDay = 3

// ErrTooManyDataRequests refuses a request over MaxDataRequestsPerDay:
// nothing is stored and nothing is sent.
var ErrTooManyDataRequests = engine.Errorf(engine.CodeTooMany,
	"Your household has sent %d requests in the last 24 hours; the club answers them first. Please try again tomorrow.", MaxDataRequestsPerDay)

// DataRequest is a member's request about their data.
type DataRequest struct {
	bun.BaseModel  `bun:"table:data_requests" json:"-"`
	ID             int64  `bun:"id,pk,autoincrement" json:"id"`
	OrganisationID int64  `bun:"organisation_id,notnull" json:"-"`
	UserKey        string `bun:"user_key,notnull" json:"userKey"`
	PersonID       *int64 `bun:"person_id" json:"personId,omitempty"`
	// WriterID is the person of the household who wrote the request; nil
	// when not known (the member did not say, or a request from before).
	// The text is theirs: it goes at their erasure.
	WriterID  *int64     `bun:"writer_person_id" json:"writerPersonId,omitempty"`
	Kind      string     `bun:"kind,notnull" json:"kind"`
	Message   string     `bun:"message,notnull" json:"message"`
	Language  string     `bun:"language,notnull" json:"language"`
	Status    string     `bun:"status,notnull" json:"status"`
	CreatedAt time.Time  `bun:"created_at,notnull" json:"createdAt"`
	DoneAt    *time.Time `bun:"done_at" json:"doneAt,omitempty"`
	DoneBy    string     `bun:"done_by,notnull" json:"-"`
	Note      string     `bun:"note,notnull" json:"note,omitempty"`
	// ReplyTo is unused and kept empty: the answer goes to the
	// household's addresses as they are when staff mark it done.
	ReplyTo string `bun:"reply_to,notnull" json:"-"`
}

// DataRequestPayload is the payload of both data request messages.
type DataRequestPayload struct {
	RequestID      int64 `json:"requestId"`
	OrganisationID int64 `json:"organisationId"`
}

// NewDataRequest is what a member asks.
type NewDataRequest struct {
	Kind string
	// PersonID is the person the request is about; nil: the household.
	PersonID *int64
	// WriterID is the person of the household who writes it; nil: not
	// said (a household of one person is its own writer).
	WriterID *int64
	Message  string
}

// RequestDataChange stores a member's request from the household of
// userKey, queues the e-mail to the club's contact address and audits it,
// in one transaction. The person and the writer must belong to the
// household; a household
// over MaxDataRequestsPerDay is refused (ErrTooManyDataRequests).
func (s *Service) RequestDataChange(ctx context.Context, orgID int64, userKey string, r NewDataRequest) (_ *DataRequest, err error) {
	if !engine.InScope(ctx, orgID) || userKey == "" {
		return nil, engine.Errorf(engine.CodeNotFound, "household not found")
	}
	r.Message = strings.TrimSpace(r.Message)
	var fields []engine.FieldError
	if r.Kind != DataRequestCorrection && r.Kind != DataRequestErasure {
		fields = append(fields, engine.FieldError{Field: "kind", Message: "must be correction or erasure"})
	}
	if r.Kind == DataRequestCorrection && r.Message == "" {
		fields = append(fields, engine.FieldError{Field: "message", Message: "say what should be corrected"})
	}
	if utf8.RuneCountInString(r.Message) > MaxDataRequestText || !utf8.ValidString(r.Message) {
		fields = append(fields, engine.FieldError{Field: "message", Message: fmt.Sprintf("at most %d characters", MaxDataRequestText)})
	}
	if len(fields) > 0 {
		return nil, &engine.Error{Code: engine.CodeInvalid, Message: "The request is not valid.", Fields: fields}
	}
	now := s.Clock().UTC()
	req := &DataRequest{OrganisationID: orgID, UserKey: userKey, PersonID: r.PersonID, WriterID: r.WriterID, Kind: r.Kind, Message: r.Message,
		Language: engine.LanguageOf(ctx), Status: DataRequestOpen, CreatedAt: now}
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		org, err := engine.LoadOrganisation(ctx, tx, orgID)
		if err != nil {
			return err
		}
		// The household's links, locked on PostgreSQL: two requests at
		// once are counted one after the other.
		var members []int64
		if err := store.ForUpdate(tx.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").
			Where("user_key = ? AND organisation_id = ?", userKey, orgID)).Scan(ctx, &members); err != nil {
			return fmt.Errorf("load household: %w", err)
		}
		if len(members) == 0 {
			return engine.Errorf(engine.CodeNotFound, "household not found")
		}
		recent, err := tx.NewSelect().Model((*DataRequest)(nil)).
			Where("organisation_id = ? AND user_key = ? AND created_at > ?", orgID, userKey, now.Add(-24*time.Hour)).Count(ctx)
		if err != nil {
			return fmt.Errorf("count data requests: %w", err)
		}
		if recent >= MaxDataRequestsPerDay {
			return ErrTooManyDataRequests
		}
		for _, f := range []struct {
			name string
			id   *int64
		}{{"personId", r.PersonID}, {"writerPersonId", r.WriterID}} {
			if f.id != nil && !slices.Contains(members, *f.id) {
				return &engine.Error{Code: engine.CodeInvalid, Message: "The request is not valid.", Fields: []engine.FieldError{{Field: f.name, Message: "is not a person of your household"}}}
			}
		}
		if req.WriterID == nil && len(members) == 1 {
			req.WriterID = &members[0]
		}
		if _, err := tx.NewInsert().Model(req).Exec(ctx); err != nil {
			return fmt.Errorf("store data request: %w", err)
		}
		if org.ContactEmail != "" {
			payload, _ := json.Marshal(DataRequestPayload{RequestID: req.ID, OrganisationID: orgID})
			if err := store.QueueMessage(ctx, tx, &engine.OutboxMessage{Kind: KindDataRequest, DedupKey: dataRequestKey(KindDataRequest, req.ID),
				Recipient: org.ContactEmail, Payload: string(payload), CreatedAt: now}); err != nil {
				return err
			}
		}
		return s.Audit(ctx, tx, engine.Actor{Name: "member"}, engine.AuditEntry{OrganisationID: orgID, Action: "data_request.create",
			TargetType: "data_request", TargetID: strconv.FormatInt(req.ID, 10), After: map[string]any{"kind": req.Kind, "personId": req.PersonID}})
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}

func dataRequestKey(kind engine.MessageKind, id int64) string {
	return string(kind) + ":" + strconv.FormatInt(id, 10)
}

// DataRequests lists an organisation's requests, open ones first, newest
// first within each state; status "" lists all.
func (s *Service) DataRequests(ctx context.Context, orgID int64, status string) (out []DataRequest, err error) {
	q := s.DB().NewSelect().Model(&out).Where("organisation_id = ?", orgID)
	if status != "" {
		q = q.Where("status = ?", status)
	}
	if err := q.OrderExpr("status DESC, id DESC").Limit(500).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list data requests: %w", err)
	}
	return out, nil
}

// CompleteDataRequest marks an open request done with staff's note,
// queues the e-mail telling the household, and audits it.
func (s *Service) CompleteDataRequest(ctx context.Context, actor engine.Actor, orgID, id int64, note string) (err error) {
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxDataRequestText {
		return &engine.Error{Code: engine.CodeInvalid, Message: "The note is too long.", Fields: []engine.FieldError{{Field: "note", Message: fmt.Sprintf("at most %d characters", MaxDataRequestText)}}}
	}
	now := s.Clock().UTC()
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		var req DataRequest
		if err := tx.NewSelect().Model(&req).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "data request")
		}
		if req.Status == DataRequestDone {
			return engine.Errorf(engine.CodeConflict, "The request is already done.")
		}
		if _, err := tx.NewUpdate().Model((*DataRequest)(nil)).Set("status = ?", DataRequestDone).Set("done_at = ?", now).
			Set("done_by = ?", actor.Name).Set("note = ?", note).Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("complete data request: %w", err)
		}
		to, err := householdEmails(ctx, tx, orgID, req.UserKey)
		if err != nil {
			return err
		}
		if len(to) > 0 {
			payload, _ := json.Marshal(DataRequestPayload{RequestID: id, OrganisationID: orgID})
			if err := store.QueueMessage(ctx, tx, &engine.OutboxMessage{Kind: KindDataRequestDone, DedupKey: dataRequestKey(KindDataRequestDone, id),
				Recipient: strings.Join(to, ", "), Payload: string(payload), CreatedAt: now}); err != nil {
				return err
			}
		}
		return s.Audit(ctx, tx, actor, engine.AuditEntry{OrganisationID: orgID, Action: "data_request.done", TargetType: "data_request",
			TargetID: strconv.FormatInt(id, 10), Before: map[string]string{"status": DataRequestOpen}, After: map[string]string{"status": DataRequestDone}})
	})
}

// householdEmails are the distinct e-mail addresses of the persons
// linked to userKey, as stored.
func householdEmails(ctx context.Context, db bun.IDB, orgID int64, userKey string) ([]string, error) {
	var emails []string
	if err := db.NewSelect().Model((*engine.Person)(nil)).Column("email").
		Where("id IN (?)", db.NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ? AND organisation_id = ?", userKey, orgID)).
		Where("email <> ''").OrderExpr("id").Scan(ctx, &emails); err != nil {
		return nil, fmt.Errorf("load household addresses: %w", err)
	}
	var out []string
	for _, e := range emails {
		if !containsFold(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// DataRequestMessage is what a data request's e-mail says.
type DataRequestMessage struct {
	Organisation engine.Organisation
	Request      DataRequest
	// Person is the person the request is about, if one.
	Person *engine.Person
	// Recipients are the addresses of the message as queued.
	Recipients []string
}

// LoadDataRequestMessage loads what a data request message is about.
func LoadDataRequestMessage(ctx context.Context, db bun.IDB, msg *engine.OutboxMessage) (*DataRequestMessage, error) {
	var p DataRequestPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.RequestID == 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "outbox message %d: bad data request payload", msg.ID)
	}
	m := &DataRequestMessage{}
	if err := db.NewSelect().Model(&m.Request).Where("id = ? AND organisation_id = ?", p.RequestID, p.OrganisationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "data request")
	}
	org, err := engine.LoadOrganisation(ctx, db, p.OrganisationID)
	if err != nil {
		return nil, err
	}
	m.Organisation = *org
	if m.Request.PersonID != nil {
		var person engine.Person
		if err := db.NewSelect().Model(&person).Where("id = ?", *m.Request.PersonID).Scan(ctx); err != nil {
			return nil, engine.NotFoundOr(err, "person")
		}
		m.Person = &person
	}
	for _, a := range strings.Split(msg.Recipient, ",") {
		if a = strings.TrimSpace(a); a != "" {
			m.Recipients = append(m.Recipients, a)
		}
	}
	return m, nil
}
