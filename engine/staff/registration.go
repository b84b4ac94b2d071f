package staff

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/definition"
	"portal/engine/directdebit"
	"portal/engine/internal/store"
	"portal/engine/jobs"
	"portal/engine/payment"
	"portal/engine/registration"
)

// One registration as staff see it, and what staff may do to it. Every
// action is audited in its own transaction and is scoped to the staff
// member's organisation: another club's registration is not found.

// RegistrationDetail is everything about one registration.
type RegistrationDetail struct {
	Instance   engine.ProcessInstance
	Period     engine.MembershipPeriod
	Definition engine.ProcessDefinition
	// Household are the persons the user key may register; Selected the
	// ids of those chosen in this registration.
	Household []engine.Person
	Selected  map[int64]bool
	// Steps are the definition's questions in order with this
	// registration's answers (none for an archived one: see Archive).
	Steps []AnsweredStep
	// Archive is set when the answers were archived (90 days after the end).
	Archive     *ProcessArchive
	Memberships []StaffMembership
	Order       *engine.Order // the newest order, with its lines; nil before the commit
	Payments    []PaymentWithEvents
	Messages    []MessageDelivery
	// Mandate is the SEPA mandate the order is collected under; nil when
	// it has none (engine/directdebit/debit_mandates.go).
	Mandate *directdebit.DebitMandate
}

// AnsweredStep is one question and the answers given to it.
type AnsweredStep struct {
	Step    engine.ProcessStep
	Answers []StepAnswer
}

// StepAnswer is one answer: of a person, or of the registration (PersonID nil).
type StepAnswer struct {
	PersonID *int64
	Value    string
}

// ProcessArchive is the archive row of an archived registration.
type ProcessArchive struct {
	bun.BaseModel `bun:"table:process_archives"`
	InstanceID    int64     `bun:"instance_id,pk"`
	Mode          string    `bun:"mode,notnull"`
	ArchivedAt    time.Time `bun:"archived_at,notnull"`
	Answers       int       `bun:"answers,notnull"`
	Summary       string    `bun:"summary,notnull"`
}

// Persons is how many persons' answers the archive took (from its
// summary; 0 when the summary does not say).
func (a *ProcessArchive) Persons() int {
	var sum struct {
		Persons int `json:"persons"`
	}
	if json.Unmarshal([]byte(a.Summary), &sum) != nil {
		return 0
	}
	return sum.Persons
}

// Kept reports whether the archived answers are kept (ArchiveKeep), not
// deleted.
func (a *ProcessArchive) Kept() bool {
	return registration.ArchiveMode(a.Mode) == registration.ArchiveKeep
}

// StaffMembership is a membership of the registration with its type's name.
type StaffMembership struct {
	engine.Membership
	TypeName string `bun:"type_name"`
	// TypeTexts are the type's name per language (the staff page's language).
	TypeTexts engine.Texts `bun:"type_texts"`
}

// PaymentWithEvents is a payment attempt and its provider events.
type PaymentWithEvents struct {
	engine.Payment
	Events []engine.PaymentEvent
}

// MessageDelivery is an outbox message about the registration and the
// state of the job that delivers it.
type MessageDelivery struct {
	engine.OutboxMessage
	JobState  jobs.State
	Attempts  int
	LastError string
}

// RegistrationDetail loads one registration of an organisation.
func (s *Service) RegistrationDetail(ctx context.Context, orgID, id int64) (d *RegistrationDetail, err error) {
	d = &RegistrationDetail{Selected: map[int64]bool{}}
	if err := s.DB().NewSelect().Model(&d.Instance).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "registration")
	}
	inst := &d.Instance
	for _, p := range inst.SelectedPersons {
		d.Selected[p] = true
	}
	if err := s.DB().NewSelect().Model(&d.Period).Where("id = ?", inst.RelatedEntityID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "period")
	}
	def, err := definition.LoadDefinition(ctx, s.DB(), inst.DefinitionID)
	if err != nil {
		return nil, err
	}
	d.Definition = *def
	if err := s.DB().NewSelect().Model(&d.Household).
		Where("id IN (?)", s.DB().NewSelect().Model((*engine.UserPerson)(nil)).Column("person_id").Where("user_key = ? AND organisation_id = ?", inst.UserKey, orgID)).
		OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load household: %w", err)
	}
	// The definition's steps come with their choices, so that answers
	// can be shown by their labels (DisplayAnswer).
	steps := def.Steps
	var data []engine.ProcessData
	if err := s.DB().NewSelect().Model(&data).Where("instance_id = ? AND data_key = ?", inst.ID, engine.DataAnswer).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load answers: %w", err)
	}
	for _, st := range steps {
		as := AnsweredStep{Step: st}
		for _, a := range data {
			if a.StepID != nil && *a.StepID == st.ID {
				as.Answers = append(as.Answers, StepAnswer{PersonID: a.PersonID, Value: a.DataValue})
			}
		}
		d.Steps = append(d.Steps, as)
	}
	var archives []ProcessArchive
	if err := s.DB().NewSelect().Model(&archives).Where("instance_id = ?", inst.ID).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load archive: %w", err)
	}
	if len(archives) > 0 {
		d.Archive = &archives[0]
	}
	if err := s.DB().NewSelect().TableExpr("memberships AS m").Join("JOIN membership_types AS t ON t.id = m.membership_type_id").
		ColumnExpr("m.*, t.name AS type_name, t.name_texts AS type_texts").Where("m.process_instance_id = ?", inst.ID).OrderExpr("m.id").Scan(ctx, &d.Memberships); err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	var orders []engine.Order
	if err := s.DB().NewSelect().Model(&orders).Relation("Lines", func(q *bun.SelectQuery) *bun.SelectQuery { return q.OrderExpr("line_no") }).
		Where("process_instance_id = ?", inst.ID).OrderExpr("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load order: %w", err)
	}
	if len(orders) == 0 {
		return d, s.loadMessages(ctx, d)
	}
	d.Order = &orders[0]
	if d.Order.DebitMandateID != nil {
		d.Mandate = &directdebit.DebitMandate{ID: *d.Order.DebitMandateID}
		if err := s.DB().NewSelect().Model(d.Mandate).WherePK().Scan(ctx); err != nil {
			return nil, fmt.Errorf("load mandate: %w", err)
		}
	}
	var payments []engine.Payment
	if err := s.DB().NewSelect().Model(&payments).Where("order_id = ?", d.Order.ID).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load payments: %w", err)
	}
	for _, p := range payments {
		pe := PaymentWithEvents{Payment: p}
		if err := s.DB().NewSelect().Model(&pe.Events).Where("reference = ?", p.Reference).OrderExpr("id").Scan(ctx); err != nil {
			return nil, fmt.Errorf("load payment events: %w", err)
		}
		d.Payments = append(d.Payments, pe)
	}
	return d, s.loadMessages(ctx, d)
}

// loadMessages finds the outbox messages about the registration by their
// keys (they name the order or the instance) with their jobs' state: by
// the columns the database reads from the keys (order_id, instance_id),
// which are indexed; LIKE on the key read every message of every club.
func (s *Service) loadMessages(ctx context.Context, d *RegistrationDetail) error {
	q := s.DB().NewSelect().TableExpr("outbox_messages AS outbox_message").ColumnExpr("outbox_message.*").
		ColumnExpr("j.state AS job_state, j.attempts, j.last_error").
		Join("LEFT JOIN jobs AS j ON j.dedup_key = 'outbox:' || outbox_message.dedup_key").
		WhereGroup(" AND ", func(w *bun.SelectQuery) *bun.SelectQuery {
			w = w.Where("outbox_message.instance_id = ?", d.Instance.ID)
			if d.Order != nil {
				w = w.WhereOr("outbox_message.order_id = ?", d.Order.ID)
			}
			return w
		}).OrderExpr("outbox_message.id")
	if err := q.Scan(ctx, &d.Messages); err != nil {
		return fmt.Errorf("load messages: %w", err)
	}
	return nil
}

// registrationForAction loads and locks a registration of orgID for a
// staff action in tx.
func registrationForAction(ctx context.Context, tx bun.Tx, orgID, id int64) (*engine.ProcessInstance, error) {
	inst := new(engine.ProcessInstance)
	q := tx.NewSelect().Model(inst).Where("id = ? AND organisation_id = ?", id, orgID)
	if tx.Dialect().Name().String() == "pg" {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "registration")
	}
	return inst, nil
}

// newestOrder is the registration's newest order, nil before the commit.
func newestOrder(ctx context.Context, db bun.IDB, instanceID int64) (*engine.Order, error) {
	var orders []engine.Order
	if err := db.NewSelect().Model(&orders).Where("process_instance_id = ?", instanceID).OrderExpr("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, fmt.Errorf("load order: %w", err)
	}
	if len(orders) == 0 {
		return nil, nil
	}
	return &orders[0], nil
}

// orderForAction locks a registration of orgID in tx and returns its
// newest order, which must have the status want (else a conflict saying
// refusal).
func orderForAction(ctx context.Context, tx bun.Tx, orgID, id int64, want engine.OrderStatus, refusal string) (*engine.Order, error) {
	inst, err := registrationForAction(ctx, tx, orgID, id)
	if err != nil {
		return nil, err
	}
	order, err := newestOrder(ctx, tx, inst.ID)
	if err != nil {
		return nil, err
	}
	if order == nil || order.Status != want {
		return nil, engine.Errorf(engine.CodeConflict, "%s", refusal)
	}
	return order, nil
}

// registrationEntry names a registration in the audit log.
func registrationEntry(orgID, id int64, action string, before, after any) engine.AuditEntry {
	return engine.AuditEntry{OrganisationID: orgID, Action: action, TargetType: "registration", TargetID: fmt.Sprint(id),
		InstanceID: &id, Before: before, After: after}
}

// ResendConfirmation queues the confirmation of a paid registration again,
// to the addresses it went to (a new message: the first may have been sent).
func (s *Service) ResendConfirmation(ctx context.Context, actor engine.Actor, orgID, id int64) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		order, err := orderForAction(ctx, tx, orgID, id, engine.OrderPaid, "Only a paid registration has a confirmation to send again.")
		if err != nil {
			return err
		}
		orig := new(engine.OutboxMessage)
		if err := tx.NewSelect().Model(orig).Where("dedup_key = ?", fmt.Sprintf("%s:order:%d", payment.KindConfirmation, order.ID)).Scan(ctx); err != nil {
			return engine.NotFoundOr(err, "confirmation")
		}
		now := s.Clock()
		msg := &engine.OutboxMessage{Kind: orig.Kind, DedupKey: fmt.Sprintf("%s:resend:%d", orig.DedupKey, now.UnixNano()),
			Recipient: orig.Recipient, Payload: orig.Payload, CreatedAt: now}
		if err := store.QueueMessage(ctx, tx, msg); err != nil {
			return err
		}
		return s.AppendAudit(ctx, tx, actor, registrationEntry(orgID, id, "registration.resend_confirmation", nil,
			map[string]any{"message": msg.DedupKey, "order": order.ID}))
	})
}

// ResendPaymentLink queues a message with the stable pay link of a
// registration that waits for payment.
func (s *Service) ResendPaymentLink(ctx context.Context, actor engine.Actor, orgID, id int64) (err error) {
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		order, err := orderForAction(ctx, tx, orgID, id, engine.OrderUnpaid, "Only a registration waiting for payment has a payment link to send.")
		if err != nil {
			return err
		}
		now := s.Clock()
		payload, _ := json.Marshal(payment.PaymentLinkPayload{OrderID: order.ID})
		msg := &engine.OutboxMessage{Kind: payment.KindPaymentLink, DedupKey: fmt.Sprintf("%s:order:%d:resend:%d", payment.KindPaymentLink, order.ID, now.UnixNano()),
			Payload: string(payload), CreatedAt: now}
		if err := store.QueueMessage(ctx, tx, msg); err != nil {
			return err
		}
		return s.AppendAudit(ctx, tx, actor, registrationEntry(orgID, id, "registration.resend_payment_link", nil,
			map[string]any{"message": msg.DedupKey, "order": order.ID}))
	})
}

// CaptureForRegistration is CaptureTransfer from a registration's page:
// the order is the registration's, which must be waiting for payment or
// paid (the same form sent twice captures once, and another transfer is
// a second payment, owed back), and the payment's note names who captured
// it.
func (s *Service) CaptureForRegistration(ctx context.Context, actor engine.Actor, orgID, id int64, c payment.Capture) (_ *payment.CaptureResult, err error) {
	inst, err := s.RegistrationDetail(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if inst.Order == nil || inst.Order.Status == engine.OrderCancelled {
		return nil, engine.Errorf(engine.CodeConflict, "Only a registration waiting for payment can have a bank transfer captured.")
	}
	c.Reference = inst.Order.PayReference
	note := strings.TrimSpace(c.Note)
	c.Note = strings.TrimSpace("captured by " + actor.Name + "; " + note)
	return s.captureAudited(ctx, actor, inst.Order, c, note)
}

// CaptureTransfer records a bank transfer staff saw arrive for the payment
// c.Reference names (the admin API, with a staff session or an API key),
// as CapturePayment does, with its audit entry, naming actor, in the
// settlement's transaction, whether the capture completes the order, is a
// part of it or is money owed back.
func (s *Service) CaptureTransfer(ctx context.Context, actor engine.Actor, c payment.Capture) (_ *payment.CaptureResult, err error) {
	if c.AmountMinor <= 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "the amount captured must be more than zero")
	}
	p, err := payment.Of(s.Service).BankAttempt(ctx, c.Reference)
	if err != nil {
		return nil, err
	}
	order, err := store.LoadOrder(ctx, s.DB(), p.OrderID)
	if err != nil {
		return nil, err
	}
	if !engine.InScope(ctx, order.OrganisationID) || (c.OrganisationID != 0 && c.OrganisationID != order.OrganisationID) {
		return nil, engine.Errorf(engine.CodeNotFound, "payment not found")
	}
	return s.captureAudited(ctx, actor, order, c, strings.TrimSpace(c.Note))
}

// captureAudited captures c for order with the registration's audit entry
// ("payment.capture": the order's status before, what was captured after,
// with the note as staff wrote it) in the settlement's transaction.
func (s *Service) captureAudited(ctx context.Context, actor engine.Actor, order *engine.Order, c payment.Capture, note string) (*payment.CaptureResult, error) {
	booked := c.BookedOn
	if booked.IsZero() {
		booked = s.Clock() // as CapturePayment books it
	}
	after := map[string]any{"order": order.ID, "amount": engine.FormatMoney(c.AmountMinor, cmp.Or(strings.ToUpper(c.Currency), order.Currency)),
		"booked": booked.Format(time.DateOnly), "note": note}
	if c.ID != "" {
		after["id"] = c.ID
	}
	ctx = engine.WithAudit(ctx, actor, registrationEntry(order.OrganisationID, order.ProcessInstanceID, "payment.capture",
		map[string]any{"order_status": order.Status}, after))
	return payment.Of(s.Service).CapturePayment(ctx, c)
}

// StaffReset resets a registration on the member's behalf, as the member's
// own reset does (answers deleted, an unpaid order cancelled), audited.
func (s *Service) StaffReset(ctx context.Context, actor engine.Actor, orgID, id int64) (err error) {
	inst := new(engine.ProcessInstance)
	if err := s.DB().NewSelect().Model(inst).Where("id = ? AND organisation_id = ?", id, orgID).Scan(ctx); err != nil {
		return engine.NotFoundOr(err, "registration")
	}
	ctx = engine.WithAudit(ctx, actor, registrationEntry(orgID, id, "registration.reset", map[string]any{"status": inst.Status}, map[string]any{"status": engine.StateInit}))
	_, err = registration.Of(s.Service).Reset(ctx, inst.UserKey, fmt.Sprint(inst.ID))
	return err
}

// CancelRegistration cancels a registration: its memberships (pending or
// active) and its order, and the instance. Money already paid stays
// recorded; staff refund it with RefundPayment (the page offers it).
func (s *Service) CancelRegistration(ctx context.Context, actor engine.Actor, orgID, id int64) (err error) {
	var open []engine.Payment
	err = engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		inst, err := registrationForAction(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if inst.Status == engine.StateCancelled {
			return engine.Errorf(engine.CodeConflict, "The registration is cancelled already.")
		}
		before := map[string]any{"status": inst.Status}
		order, err := newestOrder(ctx, tx, inst.ID)
		if err != nil {
			return err
		}
		if order != nil {
			before["order_status"] = order.Status
		}
		now := s.Clock()
		if open, err = payment.PendingPaymentsOfInstance(ctx, tx, inst.ID); err != nil {
			return err
		}
		if err := registration.CancelCommit(ctx, tx, inst.ID, now); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*engine.Membership)(nil)).Set("status = ?", engine.MembershipCancelled).
			Where("process_instance_id = ? AND status = ?", inst.ID, engine.MembershipActive).Exec(ctx); err != nil {
			return fmt.Errorf("cancel memberships: %w", err)
		}
		if order != nil && order.Status == engine.OrderPaid {
			if _, err := tx.NewUpdate().Model((*engine.Order)(nil)).Set("status = ?", engine.OrderCancelled).Where("id = ?", order.ID).Exec(ctx); err != nil {
				return fmt.Errorf("cancel order: %w", err)
			}
		}
		inst.Status, inst.EndTime = engine.StateCancelled, &now
		if err := store.BumpVersion(ctx, tx, inst, now, "status", "end_time"); err != nil {
			return err
		}
		cancelled := engine.RegistrationEventData{RegistrationID: inst.ID, PeriodID: inst.RelatedEntityID, UserKey: inst.UserKey}
		if order != nil {
			cancelled.OrderID = &order.ID
		}
		if err := engine.EmitEvent(ctx, tx, orgID, engine.EventRegistrationCancelled, cancelled, now); err != nil {
			return err
		}
		return s.AppendAudit(ctx, tx, actor, registrationEntry(orgID, id, "registration.cancel", before,
			map[string]any{"status": engine.StateCancelled, "order_status": engine.OrderCancelled}))
	})
	if err != nil {
		return err
	}
	for _, p := range open {
		if err := payment.Of(s.Service).ProviderOf(orgID, &p).Expire(ctx, p); err != nil {
			s.Log.WarnContext(ctx, "a cancelled checkout could not be closed at the provider", "reference", p.Reference, "err", err)
		}
	}
	return nil
}

// RefundPayment refunds a succeeded payment of a registration: through
// the provider's API (Stripe), or, for a bank transfer, recorded as
// refunded by staff (they make the transfer from the bank account).
func (s *Service) RefundPayment(ctx context.Context, actor engine.Actor, orgID, id int64, reference, note string) (err error) {
	p := new(engine.Payment)
	if err := s.DB().NewSelect().Model(p).Where("reference = ?", reference).
		Where("order_id IN (?)", s.DB().NewSelect().Model((*engine.Order)(nil)).Column("id").Where("process_instance_id = ? AND organisation_id = ?", id, orgID)).
		Scan(ctx); err != nil {
		return engine.NotFoundOr(err, "payment")
	}
	if p.Status != engine.PaymentSucceeded || p.RefundStatus == engine.RefundDone {
		return engine.Errorf(engine.CodeConflict, "Only a received payment that was not refunded yet can be refunded.")
	}
	refundID := ""
	if p.Provider == payment.BankTransferProvider {
		refundID = fmt.Sprintf("manual:%s:%s", actor.Name, s.Clock().Format(time.DateOnly))
	} else {
		req := engine.RefundRequest{Reference: p.Reference, AmountMinor: p.AmountMinor, Currency: p.Currency}
		if p.ProviderID != nil {
			req.ProviderID = *p.ProviderID
		}
		if p.TransactionID != nil {
			req.TransactionID = *p.TransactionID
		}
		if refundID, err = payment.Of(s.Service).ProviderOf(orgID, p).Refund(ctx, req); err != nil {
			s.Log.ErrorContext(ctx, "staff refund failed at the provider", "reference", p.Reference, "err", err)
			return &engine.Error{Code: engine.CodeUnavailable, Message: "The payment provider did not make the refund. Please try again later.", Err: err}
		}
	}
	return engine.InTx(ctx, s.DB(), func(ctx context.Context, tx bun.Tx) error {
		now := s.Clock()
		res, err := tx.NewUpdate().Model((*engine.Payment)(nil)).Set("refund_status = ?", engine.RefundDone).Set("refund_id = ?", refundID).
			Set("updated_at = ?", now).Where("id = ? AND refund_status <> ?", p.ID, engine.RefundDone).Exec(ctx)
		if err != nil {
			return fmt.Errorf("record refund: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return engine.Errorf(engine.CodeConflict, "The payment was refunded meanwhile.")
		}
		order, err := store.LoadOrder(ctx, tx, p.OrderID)
		if err != nil {
			return err
		}
		if err := engine.EmitPaymentEvent(ctx, tx, engine.EventPaymentRefunded, p, order, refundID, now); err != nil {
			return err
		}
		return s.AppendAudit(ctx, tx, actor, registrationEntry(orgID, id, "payment.refund",
			map[string]any{"payment": p.Reference, "refund_status": p.RefundStatus},
			map[string]any{"payment": p.Reference, "refund_status": engine.RefundDone, "refund": refundID, "amount": engine.FormatMoney(p.AmountMinor, p.Currency), "note": strings.TrimSpace(note)}))
	})
}
