package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"portal/engine/jobs"
)

// Events: what a change announces to the organisation's webhook
// endpoints, written by EmitEvent in the transaction of the change itself
// (the transactional outbox: an event exists exactly when its change
// committed), with a delivery job per subscribed endpoint. The endpoints
// and the record of each delivery are engine/webhook's; sending is
// outbound/webhooks'.

// Event types an endpoint can subscribe to.
const (
	EventRegistrationCommitted = "registration.committed"
	EventRegistrationCancelled = "registration.cancelled"
	EventPaymentSucceeded      = "payment.succeeded"
	EventPaymentFailed         = "payment.failed"
	EventPaymentRefunded       = "payment.refunded"
	EventMembershipActivated   = "membership.activated"
	EventInvitationOpened      = "invitation.opened"
)

// WebhookEventTypes lists every event type, in the order documented.
var WebhookEventTypes = []string{EventRegistrationCommitted, EventPaymentSucceeded, EventPaymentFailed, EventPaymentRefunded,
	EventMembershipActivated, EventRegistrationCancelled, EventInvitationOpened}

// KindWebhookDelivery is the job kind that sends one delivery.
const KindWebhookDelivery = "webhook_delivery"

// WebhookMaxAttempts is how often a delivery is tried before it is dead:
// with the runner's backoff (10 s doubling, at most 1 h) about four hours.
const WebhookMaxAttempts = jobs.DefaultMaxAttempts

// Delivery statuses as recorded after each attempt.
const (
	DeliveryPending   = "pending"   // not tried yet
	DeliveryDelivered = "delivered" // the endpoint answered 2xx
	DeliveryFailed    = "failed"    // the last attempt failed; retried unless dead
	DeliveryGone      = "gone"      // the endpoint answered 410: it is disabled
	DeliverySkipped   = "skipped"   // the endpoint was inactive when its turn came
	DeliveryDead      = "dead"      // out of attempts (read from the job)
)

// WebhookEndpoint is where an organisation wants its events POSTed.
type WebhookEndpoint struct {
	bun.BaseModel  `bun:"table:webhook_endpoints"`
	ID             int64     `bun:"id,pk,autoincrement"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	URL            string    `bun:"url,notnull"`
	SecretSealed   string    `bun:"secret_sealed,notnull"`
	EventsList     string    `bun:"events,notnull"` // comma-separated
	Active         bool      `bun:"active,notnull"`
	DisabledReason string    `bun:"disabled_reason,notnull"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
	UpdatedAt      time.Time `bun:"updated_at,notnull"`
}

// Events is the endpoint's subscribed event types.
func (e *WebhookEndpoint) Events() []string {
	if e.EventsList == "" {
		return []string{}
	}
	return strings.Split(e.EventsList, ",")
}

// WebhookEvent is one event, its body frozen when it was written so that
// every attempt sends the same bytes.
type WebhookEvent struct {
	bun.BaseModel  `bun:"table:webhook_events,alias:ev"`
	ID             int64     `bun:"id,pk,autoincrement"`
	PublicID       string    `bun:"public_id,notnull"`
	OrganisationID int64     `bun:"organisation_id,notnull"`
	Type           string    `bun:"type,notnull"`
	Body           string    `bun:"body,notnull"`
	CreatedAt      time.Time `bun:"created_at,notnull"`
}

// WebhookDeliveryRow is one event's delivery to one endpoint.
type WebhookDeliveryRow struct {
	bun.BaseModel   `bun:"table:webhook_deliveries,alias:d"`
	ID              int64      `bun:"id,pk,autoincrement"`
	EventID         int64      `bun:"event_id,notnull"`
	EndpointID      int64      `bun:"endpoint_id,notnull"`
	JobKey          string     `bun:"job_key,notnull"`
	Status          string     `bun:"status,notnull"`
	Attempts        int        `bun:"attempts,notnull"`
	ResponseCode    *int       `bun:"response_code"`
	ResponseSnippet string     `bun:"response_snippet,notnull"`
	LastError       string     `bun:"last_error,notnull"`
	LastAttemptAt   *time.Time `bun:"last_attempt_at"`
	CreatedAt       time.Time  `bun:"created_at,notnull"`
}

// WebhookJob is the payload of a delivery job.
type WebhookJob struct {
	Delivery int64 `json:"delivery"`
}

// WithPrivateWebhookAddresses lets webhook endpoints be on loopback and
// private addresses: for a portal that itself runs on a loopback address
// (development, tests), as the delivery's dial guard does
// (outbound/webhooks Deps.AllowPrivate).
func WithPrivateWebhookAddresses() ServiceOption {
	return func(s *Service) { s.PrivateWebhooks = true }
}

// WebhookNetworks are networks the operator lets webhook endpoints be on
// although the address guard refuses them (PORTAL_WEBHOOK_ALLOW_NETWORKS):
// a receiver on the portal's own private network, say. Empty by default:
// the guard is then as strict as without it.
type WebhookNetworks []netip.Prefix

// ParseWebhookNetworks reads a comma-separated list of CIDRs (a bare
// address counts as a /32 or /128). A prefix of length 0 is refused:
// allowing every address is switching the guard off, which this setting
// is not for.
func ParseWebhookNetworks(s string) (WebhookNetworks, error) {
	var out WebhookNetworks
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR (e.g. 10.20.0.0/16)", part)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Bits() == 0 {
			return nil, fmt.Errorf("%q would allow every address", part)
		}
		out = append(out, netip.PrefixFrom(p.Addr().Unmap(), min(p.Bits(), p.Addr().Unmap().BitLen())).Masked())
	}
	return out, nil
}

// Contains reports whether ip is in one of the networks.
func (n WebhookNetworks) Contains(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range n {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// WithWebhookNetworks lets webhook endpoints be on the networks allowed,
// as the delivery's dial guard does (outbound/webhooks Deps.AllowNetworks).
func WithWebhookNetworks(allowed WebhookNetworks) ServiceOption {
	return func(s *Service) { s.WebhookNetworks = allowed }
}

// WebhookEnvelope is the JSON body of every delivery.
type WebhookEnvelope struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	CreatedAt    time.Time       `json:"createdAt"`
	Organisation WebhookOrg      `json:"organisation"`
	Data         json.RawMessage `json:"data"`
}

// WebhookOrg names the organisation an event belongs to.
type WebhookOrg struct {
	ID   int64  `json:"id"`
	Slug string `json:"slug"`
}

// EmitEvent writes an event of the organisation, in the transaction of the
// change it announces, with one delivery and its job per active endpoint
// subscribed to its type: a change that rolls back announces nothing, and
// one that commits is announced even if the endpoint is down now. With no
// such endpoint nothing is written.
func EmitEvent(ctx context.Context, tx bun.IDB, orgID int64, eventType string, data any, now time.Time) error {
	return EmitEvents(ctx, tx, []Emission{{OrganisationID: orgID, Type: eventType, Data: data}}, now)
}

// Emission is one event for EmitEvents: its organisation, type and data.
type Emission struct {
	OrganisationID int64
	Type           string
	Data           any
}

// EmitEvents writes events as EmitEvent writes each, in order, reading the
// endpoints of their organisations with one query: a batched settlement
// (engine/payment/settle_batch.go) announces a batch of payments at once.
func EmitEvents(ctx context.Context, tx bun.IDB, events []Emission, now time.Time) error {
	if len(events) == 0 {
		return nil
	}
	orgIDs := make([]int64, 0, 1)
	for _, e := range events {
		if !slices.Contains(orgIDs, e.OrganisationID) {
			orgIDs = append(orgIDs, e.OrganisationID)
		}
	}
	var all []WebhookEndpoint
	if err := tx.NewSelect().Model(&all).Where("organisation_id IN (?) AND active", bun.List(orgIDs)).Order("id").Scan(ctx); err != nil {
		return fmt.Errorf("emit %s: %w", events[0].Type, err)
	}
	if len(all) == 0 {
		return nil
	}
	orgs := map[int64]*Organisation{}
	for _, e := range events {
		endpoints := slices.DeleteFunc(slices.Clone(all), func(ep WebhookEndpoint) bool {
			return ep.OrganisationID != e.OrganisationID || !slices.Contains(ep.Events(), e.Type)
		})
		if len(endpoints) == 0 {
			continue
		}
		org, ok := orgs[e.OrganisationID]
		if !ok {
			var err error
			if org, err = LoadOrganisation(ctx, tx, e.OrganisationID); err != nil {
				return err
			}
			orgs[e.OrganisationID] = org
		}
		if err := writeEvent(ctx, tx, org, endpoints, e, now); err != nil {
			return fmt.Errorf("emit %s: %w", e.Type, err)
		}
	}
	return nil
}

// writeEvent stores one event of org with a delivery and its job per endpoint.
func writeEvent(ctx context.Context, tx bun.IDB, org *Organisation, endpoints []WebhookEndpoint, e Emission, now time.Time) error {
	raw, err := json.Marshal(e.Data)
	if err != nil {
		return err
	}
	id := make([]byte, 16)
	rand.Read(id)
	now = now.UTC().Truncate(time.Millisecond)
	env := WebhookEnvelope{ID: "evt_" + hex.EncodeToString(id), Type: e.Type, CreatedAt: now,
		Organisation: WebhookOrg{ID: org.ID, Slug: org.Slug}, Data: raw}
	body, err := json.Marshal(env)
	if err != nil {
		return err
	}
	ev := &WebhookEvent{PublicID: env.ID, OrganisationID: org.ID, Type: e.Type, Body: string(body), CreatedAt: now}
	if _, err := tx.NewInsert().Model(ev).Exec(ctx); err != nil {
		return err
	}
	for _, ep := range endpoints {
		d := &WebhookDeliveryRow{EventID: ev.ID, EndpointID: ep.ID, JobKey: "webhook:" + env.ID + ":" + strconv.FormatInt(ep.ID, 10),
			Status: DeliveryPending, CreatedAt: now}
		if _, err := tx.NewInsert().Model(d).Exec(ctx); err != nil {
			return err
		}
		if _, err := jobs.Enqueue(ctx, tx, now, jobs.Spec{Kind: KindWebhookDelivery, DedupKey: d.JobKey,
			Payload: WebhookJob{Delivery: d.ID}, MaxAttempts: WebhookMaxAttempts}); err != nil {
			return err
		}
	}
	return nil
}

// Event payloads: the data of each event type.

// RegistrationEventData is the data of registration.committed and
// registration.cancelled.
type RegistrationEventData struct {
	RegistrationID int64   `json:"registrationId"`
	PeriodID       int64   `json:"periodId"`
	UserKey        string  `json:"userKey"`
	PersonIDs      []int64 `json:"personIds,omitempty"`
	OrderID        *int64  `json:"orderId,omitempty"`
	TotalMinor     *int64  `json:"totalMinor,omitempty"`
	Currency       string  `json:"currency,omitempty"`
}

// PaymentEventData is the data of payment.succeeded, payment.failed and
// payment.refunded.
type PaymentEventData struct {
	Reference      string `json:"reference"`
	OrderID        int64  `json:"orderId"`
	RegistrationID int64  `json:"registrationId"`
	Provider       string `json:"provider"`
	AmountMinor    int64  `json:"amountMinor"`
	Currency       string `json:"currency"`
	RefundID       string `json:"refundId,omitempty"`
	// Outcome (payment.failed only): "failed" when the provider refused
	// the payment, "cancelled" when the checkout expired or the member
	// cancelled it. The order stays unpaid; the member can pay again.
	Outcome string `json:"outcome,omitempty"`
	// Reason (payment.failed only), when the portal closed the attempt
	// itself: why (an amount that did not match the attempt).
	Reason string `json:"reason,omitempty"`
}

// EmitPaymentEvent announces a payment attempt's success or refund.
func EmitPaymentEvent(ctx context.Context, tx bun.IDB, eventType string, p *Payment, order *Order, refundID string, now time.Time) error {
	return EmitEvents(ctx, tx, []Emission{PaymentEmission(eventType, p, order, refundID)}, now)
}

// PaymentEmission is EmitPaymentEvent's event, for EmitEvents.
func PaymentEmission(eventType string, p *Payment, order *Order, refundID string) Emission {
	return Emission{OrganisationID: order.OrganisationID, Type: eventType, Data: PaymentEventData{Reference: p.Reference, OrderID: order.ID,
		RegistrationID: order.ProcessInstanceID, Provider: p.Provider, AmountMinor: p.AmountMinor, Currency: p.Currency, RefundID: refundID}}
}

// EmitPaymentFailed announces an attempt that closed without the money:
// outcome is OutcomeFailed or OutcomeCancelled.
func EmitPaymentFailed(ctx context.Context, tx bun.IDB, p *Payment, order *Order, outcome PaymentOutcome, reason string, now time.Time) error {
	return EmitEvent(ctx, tx, order.OrganisationID, EventPaymentFailed, PaymentEventData{Reference: p.Reference, OrderID: order.ID,
		RegistrationID: order.ProcessInstanceID, Provider: p.Provider, AmountMinor: p.AmountMinor, Currency: p.Currency,
		Outcome: string(outcome), Reason: reason}, now)
}

// MembershipEventData is the data of membership.activated: the
// memberships a paid order made active, one per person.
type MembershipEventData struct {
	RegistrationID int64                 `json:"registrationId"`
	OrderID        int64                 `json:"orderId"`
	PeriodID       int64                 `json:"periodId"`
	UserKey        string                `json:"userKey"`
	Memberships    []ActivatedMembership `json:"memberships"`
}

// ActivatedMembership is one membership of membership.activated.
type ActivatedMembership struct {
	MembershipID     int64     `json:"membershipId"`
	PersonID         int64     `json:"personId"`
	MembershipTypeID int64     `json:"membershipTypeId"`
	MemberType       string    `json:"memberType"`
	ActivatedAt      time.Time `json:"activatedAt"`
}

// InvitationEventData is the data of invitation.opened (the first open).
type InvitationEventData struct {
	InvitationID int64  `json:"invitationId"`
	PeriodID     int64  `json:"periodId"`
	UserKey      string `json:"userKey"`
}
