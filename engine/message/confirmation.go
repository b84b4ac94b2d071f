package message

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/internal/store"
)

// ConfirmedMember is one person whose membership an order paid for.
type ConfirmedMember struct {
	Person     engine.Person
	Membership engine.Membership
	Type       engine.MembershipType
}

// Confirmation is what the confirmation after payment tells: the order
// and its lines, the period, the members and their types, and to whom.
type Confirmation struct {
	Organisation engine.Organisation
	Period       engine.MembershipPeriod
	Order        engine.Order
	// Reference is the succeeded payment's reference, what the member saw
	// on the return page ("" when none is recorded).
	Reference string
	Members   []ConfirmedMember
	// Recipients are the members' e-mail addresses, each once (a parent's
	// address on several children's records is written to once), in the
	// order of the persons.
	Recipients []string
	// Language is the one the member registered in (en, de, fr), "" when
	// the registration did not record one: the organisation's default.
	Language string
}

// confirmationPayload is the outbox payload of a membership_confirmation.
type confirmationPayload struct {
	OrderID int64 `json:"orderId"`
}

// ConfirmationOrder reads the order id from a membership_confirmation's payload.
func ConfirmationOrder(msg *engine.OutboxMessage) (int64, error) {
	var p confirmationPayload
	if err := json.Unmarshal([]byte(msg.Payload), &p); err != nil || p.OrderID <= 0 {
		return 0, fmt.Errorf("outbox message %d: no order id in its payload", msg.ID)
	}
	return p.OrderID, nil
}

// LoadConfirmation gathers the confirmation of a paid order.
func LoadConfirmation(ctx context.Context, db bun.IDB, orderID int64) (*Confirmation, error) {
	order, err := store.LoadOrder(ctx, db, orderID)
	if err != nil {
		return nil, err
	}
	if order.Status != engine.OrderPaid {
		return nil, engine.Errorf(engine.CodeConflict, "order %d is %s, not paid", order.ID, order.Status)
	}
	c := &Confirmation{Order: *order}
	if err := db.NewSelect().Model(&c.Organisation).Where("id = ?", order.OrganisationID).Scan(ctx); err != nil {
		return nil, engine.NotFoundOr(err, "organisation")
	}
	period, err := store.LoadPeriod(ctx, db, order.PeriodID)
	if err != nil {
		return nil, err
	}
	c.Period = *period
	var language []string
	if err := db.NewSelect().Model((*engine.ProcessInstance)(nil)).Column("language").
		Where("id = ?", order.ProcessInstanceID).Scan(ctx, &language); err != nil {
		return nil, fmt.Errorf("load the registration's language: %w", err)
	}
	if len(language) > 0 {
		c.Language = language[0]
	}
	var ref []string
	if err := db.NewSelect().Model((*engine.Payment)(nil)).Column("reference").
		Where("order_id = ? AND status = ?", order.ID, engine.PaymentSucceeded).OrderExpr("id").Limit(1).Scan(ctx, &ref); err != nil {
		return nil, fmt.Errorf("load payment reference: %w", err)
	}
	if len(ref) > 0 {
		c.Reference = ref[0]
	}
	var ms []engine.Membership
	if err := db.NewSelect().Model(&ms).Where("process_instance_id = ? AND period_id = ? AND status = ?",
		order.ProcessInstanceID, order.PeriodID, engine.MembershipActive).Order("person_id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load confirmed memberships: %w", err)
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.PersonID
	}
	persons, err := store.PersonsByID(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]engine.Person{}
	for _, p := range persons {
		byID[p.ID] = p
	}
	types, err := store.MembershipTypes(ctx, db, order.OrganisationID)
	if err != nil {
		return nil, err
	}
	typeByID := map[int64]engine.MembershipType{}
	c.Period.Localize(c.Language)
	engine.LocalizeTypes(types, c.Language)
	for _, t := range types {
		typeByID[t.ID] = t
	}
	contact, err := mainContact(ctx, db, order.ProcessInstanceID)
	if err != nil {
		return nil, err
	}
	members := make([]engine.Person, 0, len(ms))
	if p, ok := byID[contact]; ok {
		members = append(members, p) // the main contact's address comes first
	}
	for _, m := range ms {
		p := byID[m.PersonID]
		members = append(members, p)
		c.Members = append(c.Members, ConfirmedMember{Person: p, Membership: m, Type: typeByID[m.MembershipTypeID]})
	}
	c.Recipients = store.UniqueAddresses(members)
	return c, nil
}

// mainContact is the person who answered 1 to the definition's ONE
// question (exactly one person of a registration: the main contact), or 0
// when the definition has none.
func mainContact(ctx context.Context, db bun.IDB, instanceID int64) (int64, error) {
	var ids []int64
	err := db.NewSelect().TableExpr("process_data AS d").Column("d.person_id").
		Join("JOIN process_steps AS s ON s.id = d.step_id").
		Where("d.instance_id = ? AND d.data_key = ? AND d.data_value = '1' AND s.question_type = ?", instanceID, engine.DataAnswer, engine.TypeOne).
		Where("d.person_id IS NOT NULL").OrderExpr("d.id").Limit(1).Scan(ctx, &ids)
	if err != nil {
		return 0, fmt.Errorf("find the main contact: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}
